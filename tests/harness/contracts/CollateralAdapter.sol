// SPDX-License-Identifier: MIT
// A stand-in for Polymarket's CLOB V2 collateral adapters (CtfCollateralAdapter for standard markets,
// NegRiskCtfCollateralAdapter for neg-risk ones), with the external interface a Deposit Wallet calls to
// redeem: redeemPositions(pUSD, parentCollectionId, conditionId, indexSets). Like the real adapters, it
// pulls the caller's whole balance of each index set's position token from Conditional Tokens (the caller
// approved it with setApprovalForAll) — so the tokens leave the wallet in an ERC-1155 TransferSingle — and
// pays the caller in pUSD what they are worth under the condition's payout vector.
// Positions are keyed by `positionCollateral` (USDC.e for standard markets, WrappedCollateral for
// neg-risk), not pUSD. Simplification: the real adapters redeem the tokens on CTF and wrap the proceeds;
// this one keeps the tokens and pays from its own pUSD reserve (tests fund it). A zero balance pays
// nothing and does not revert, as on CTF.
pragma solidity ^0.8.20;

interface IAdapterCtf {
    function balanceOf(address account, uint256 id) external view returns (uint256);
    function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes calldata data) external;
    function payoutNumerators(bytes32 conditionId, uint256 index) external view returns (uint256);
    function payoutDenominator(bytes32 conditionId) external view returns (uint256);
    function getOutcomeSlotCount(bytes32 conditionId) external view returns (uint256);
    function getCollectionId(bytes32 parentCollectionId, bytes32 conditionId, uint256 indexSet) external view returns (bytes32);
    function getPositionId(address collateralToken, bytes32 collectionId) external view returns (uint256);
}

interface IAdapterErc20 {
    function transfer(address to, uint256 value) external returns (bool);
}

contract CollateralAdapter {
    IAdapterCtf public immutable ctf;
    address public immutable pUsd;
    address public immutable positionCollateral;

    /// The stand-in's own event (the real adapters' events are not part of what we rely on).
    event PositionsRedeemed(address indexed redeemer, bytes32 indexed conditionId, uint256[] indexSets, uint256 payout);

    constructor(address ctf_, address pUsd_, address positionCollateral_) {
        ctf = IAdapterCtf(ctf_);
        pUsd = pUsd_;
        positionCollateral = positionCollateral_;
    }

    function positionIdOf(bytes32 conditionId, uint256 indexSet) public view returns (uint256) {
        return ctf.getPositionId(positionCollateral, ctf.getCollectionId(bytes32(0), conditionId, indexSet));
    }

    function redeemPositions(address collateralToken, bytes32 parentCollectionId, bytes32 conditionId, uint256[] calldata indexSets) external {
        require(collateralToken == pUsd, "collateral token must be pUSD");
        uint256 den = ctf.payoutDenominator(conditionId);
        require(den > 0, "result for condition not received yet");
        uint256 slots = ctf.getOutcomeSlotCount(conditionId);
        uint256 payout = 0;
        for (uint256 i = 0; i < indexSets.length; i++) {
            uint256 indexSet = indexSets[i];
            require(indexSet > 0 && indexSet < (1 << slots), "got invalid index set");
            uint256 positionId = ctf.getPositionId(positionCollateral, ctf.getCollectionId(parentCollectionId, conditionId, indexSet));
            uint256 balance = ctf.balanceOf(msg.sender, positionId);
            if (balance == 0) continue;
            uint256 numerator = 0;
            for (uint256 j = 0; j < slots; j++) if (indexSet & (1 << j) != 0) numerator += ctf.payoutNumerators(conditionId, j);
            ctf.safeTransferFrom(msg.sender, address(this), positionId, balance, "");
            payout += (balance * numerator) / den;
        }
        if (payout > 0) require(IAdapterErc20(pUsd).transfer(msg.sender, payout), "pUSD transfer failed");
        emit PositionsRedeemed(msg.sender, conditionId, indexSets, payout);
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155BatchReceived.selector;
    }
}
