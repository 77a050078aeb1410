// SPDX-License-Identifier: MIT
// A minimal ERC-1155 ledger for tests: balances at storage slot 0 like the real contracts' mapping,
// the balanceOfBatch the service reads, and mint/burn for tests to move tokens.
pragma solidity ^0.8.20;

contract MiniErc1155 {
    mapping(uint256 => mapping(address => uint256)) private balances;

    event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);

    function balanceOf(address account, uint256 id) external view returns (uint256) {
        return balances[id][account];
    }

    function balanceOfBatch(address[] calldata accounts, uint256[] calldata ids) external view returns (uint256[] memory out) {
        require(accounts.length == ids.length, "length mismatch");
        out = new uint256[](ids.length);
        for (uint256 i = 0; i < ids.length; i++) out[i] = balances[ids[i]][accounts[i]];
    }

    function mint(address to, uint256 id, uint256 amount) external {
        balances[id][to] += amount;
        emit TransferSingle(msg.sender, address(0), to, id, amount);
    }

    function burn(address from, uint256 id, uint256 amount) external {
        balances[id][from] -= amount;
        emit TransferSingle(msg.sender, from, address(0), id, amount);
    }
}
