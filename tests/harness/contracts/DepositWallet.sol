// SPDX-License-Identifier: MIT
// A stand-in for Polymarket's Deposit Wallet (the smart wallet a user trades from), with the real
// external interface our redemption path relies on:
//  - execute(Batch, signature), callable only by the DepositWalletFactory (the relayer submits through
//    it), checking in the real order: batch non-empty, batch.wallet == this, batch.nonce == nonce()
//    (then incremented), block.timestamp <= deadline, signature valid (ERC-1271 on the EIP-712 digest);
//  - the EIP-712 domain {name "DepositWallet", version "1", chainId, verifyingContract: this} and types
//    Call(address target,uint256 value,bytes data), Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls);
//  - signatures: a plain 65-byte signature is the owner's; a session signer's is the envelope
//    abi.encode(bytes32 leftPad(signer), bytes32(0), bytes sig65) ++ 32 bytes of 0x6492…6492, valid while
//    sessionSignerAuthorizedUntil(signer) >= block.timestamp, and its calls may not target the wallet;
//  - authorizeSessionSigner / revokeSessionSigner / sessionSignerAuthorizedUntil, and ERC-1155 receiver hooks.
// Simplifications: revert reasons are plain strings (readable in the relayer stand-in's error_msg) where
// the real contract uses custom errors; there is no beacon (so no "cannot call beacon" rule); and, as a
// test convenience the real wallet does not offer, the owner may also call authorize/revoke directly.
pragma solidity ^0.8.20;

contract DepositWallet {
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    struct Batch {
        address wallet;
        uint256 nonce;
        uint256 deadline;
        Call[] calls;
    }

    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address target,uint256 value,bytes data)");
    bytes32 private constant BATCH_TYPEHASH = keccak256("Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)Call(address target,uint256 value,bytes data)");
    bytes32 private constant SESSION_SUFFIX = 0x6492649264926492649264926492649264926492649264926492649264926492;
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;

    address public immutable owner;
    address public immutable factory;
    uint256 public nonce;
    mapping(address => uint256) public sessionSignerAuthorizedUntil;

    event BatchExecuted(uint256 indexed nonce, bytes32 digest);
    event SessionSignerAuthorized(address indexed signer, uint256 validUntil);
    event SessionSignerRevoked(address indexed signer);

    constructor(address owner_, address factory_) {
        owner = owner_;
        factory = factory_;
    }

    receive() external payable {}

    modifier onlySelfOrOwner() {
        require(msg.sender == address(this) || msg.sender == owner, "OnlySelf");
        _;
    }

    function authorizeSessionSigner(address signer, uint256 validUntil) external onlySelfOrOwner {
        require(signer != address(0), "InvalidSessionSigner");
        sessionSignerAuthorizedUntil[signer] = validUntil;
        emit SessionSignerAuthorized(signer, validUntil);
    }

    function revokeSessionSigner(address signer) external onlySelfOrOwner {
        delete sessionSignerAuthorizedUntil[signer];
        emit SessionSignerRevoked(signer);
    }

    function execute(Batch calldata batch, bytes calldata signature) external payable {
        require(msg.sender == factory, "OnlyFactory");
        require(batch.calls.length > 0, "EmptyBatch");
        require(batch.wallet == address(this), "InvalidWallet");
        require(batch.nonce == nonce, "InvalidNonce");
        nonce = batch.nonce + 1;
        require(block.timestamp <= batch.deadline, "Expired");
        bytes32 digest = batchDigest(batch);
        (bool valid, bool session) = _check(digest, signature);
        require(valid, "InvalidSignature");
        for (uint256 i = 0; i < batch.calls.length; i++) {
            Call calldata c = batch.calls[i];
            if (session) require(c.target != address(this), "SessionSignerSelfCallNotAllowed");
            (bool ok, bytes memory result) = c.target.call{value: c.value}(c.data);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
        }
        emit BatchExecuted(batch.nonce, digest);
    }

    /// The EIP-712 digest a Batch is signed over.
    function batchDigest(Batch calldata batch) public view returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](batch.calls.length);
        for (uint256 i = 0; i < batch.calls.length; i++) {
            Call calldata c = batch.calls[i];
            callHashes[i] = keccak256(abi.encode(CALL_TYPEHASH, c.target, c.value, keccak256(c.data)));
        }
        bytes32 structHash = keccak256(abi.encode(BATCH_TYPEHASH, batch.wallet, batch.nonce, batch.deadline, keccak256(abi.encodePacked(callHashes))));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256("DepositWallet"), keccak256("1"), block.chainid, address(this)));
    }

    /// ERC-1271: the owner's plain signature, or an authorised session signer's envelope.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (bool valid, ) = _check(hash, signature);
        return valid ? ERC1271_MAGIC : bytes4(0xffffffff);
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155BatchReceived.selector;
    }

    /// (valid, signedBySessionSigner)
    function _check(bytes32 hash, bytes calldata signature) private view returns (bool, bool) {
        if (signature.length == 65) return (_recover(hash, signature) == owner, false);
        // Session envelope: abi.encode(bytes32, bytes32, bytes) (at least 5 words) then the suffix word.
        if (signature.length < 7 * 32 || bytes32(signature[signature.length - 32:]) != SESSION_SUFFIX) return (false, false);
        (bytes32 signerWord, , bytes memory inner) = abi.decode(signature[:signature.length - 32], (bytes32, bytes32, bytes));
        address signer = address(uint160(uint256(signerWord)));
        if (signer == address(0) || sessionSignerAuthorizedUntil[signer] < block.timestamp) return (false, true);
        return (inner.length == 65 && _recoverMemory(hash, inner) == signer, true);
    }

    function _recover(bytes32 hash, bytes calldata sig) private pure returns (address) {
        return _recoverMemory(hash, sig);
    }

    function _recoverMemory(bytes32 hash, bytes memory sig) private pure returns (address) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(sig, 32))
            s := mload(add(sig, 64))
            v := byte(0, mload(add(sig, 96)))
        }
        if (v < 27) v += 27;
        // Reject malleable (high-s) signatures, as OpenZeppelin's ECDSA does.
        if (uint256(s) > 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) return address(0);
        return ecrecover(hash, v, r, s);
    }
}
