// SPDX-License-Identifier: MIT
// A stand-in for the Conditional Tokens Framework contract Polymarket runs on Polygon, with the real
// external interface the service calls or reads: ERC-1155 balances and approvals, prepareCondition,
// reportPayouts, payoutNumerators / payoutDenominator, redeemPositions, and the ConditionResolution
// and PayoutRedemption events with the real signatures and indexed fields.
// One deliberate simplification: getCollectionId is a plain keccak, not Gnosis' alt_bn128 point
// addition. The service never derives ids itself (it takes token ids from Gamma), so nothing depends
// on it. `mint` lets tests hand out outcome tokens (backed by collateral they deposit here).
pragma solidity ^0.8.20;

interface IERC20 {
    function transfer(address to, uint256 value) external returns (bool);
}

contract ConditionalTokens {
    mapping(uint256 => mapping(address => uint256)) private balances;
    mapping(address => mapping(address => bool)) private operators;
    mapping(bytes32 => uint256[]) public payoutNumerators;
    mapping(bytes32 => uint256) public payoutDenominator;

    event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event ConditionPreparation(bytes32 indexed conditionId, address indexed oracle, bytes32 indexed questionId, uint256 outcomeSlotCount);
    event ConditionResolution(bytes32 indexed conditionId, address indexed oracle, bytes32 indexed questionId, uint256 outcomeSlotCount, uint256[] payoutNumerators);
    event PayoutRedemption(address indexed redeemer, IERC20 indexed collateralToken, bytes32 indexed parentCollectionId, bytes32 conditionId, uint256[] indexSets, uint256 payout);

    function balanceOf(address account, uint256 id) external view returns (uint256) {
        return balances[id][account];
    }

    function balanceOfBatch(address[] calldata accounts, uint256[] calldata ids) external view returns (uint256[] memory out) {
        require(accounts.length == ids.length, "length mismatch");
        out = new uint256[](ids.length);
        for (uint256 i = 0; i < ids.length; i++) out[i] = balances[ids[i]][accounts[i]];
    }

    function setApprovalForAll(address operator, bool approved) external {
        operators[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address owner, address operator) external view returns (bool) {
        return operators[owner][operator];
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes calldata) external {
        require(from == msg.sender || operators[from][msg.sender], "ERC1155: need operator approval for 3rd party transfers.");
        balances[id][from] -= value;
        balances[id][to] += value;
        emit TransferSingle(msg.sender, from, to, id, value);
    }

    function getConditionId(address oracle, bytes32 questionId, uint256 outcomeSlotCount) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(oracle, questionId, outcomeSlotCount));
    }

    function getCollectionId(bytes32 parentCollectionId, bytes32 conditionId, uint256 indexSet) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(parentCollectionId, conditionId, indexSet));
    }

    function getPositionId(IERC20 collateralToken, bytes32 collectionId) public pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(collateralToken, collectionId)));
    }

    function getOutcomeSlotCount(bytes32 conditionId) external view returns (uint256) {
        return payoutNumerators[conditionId].length;
    }

    function prepareCondition(address oracle, bytes32 questionId, uint256 outcomeSlotCount) external {
        require(outcomeSlotCount > 1 && outcomeSlotCount <= 256, "invalid outcome slot count");
        bytes32 conditionId = getConditionId(oracle, questionId, outcomeSlotCount);
        require(payoutNumerators[conditionId].length == 0, "condition already prepared");
        payoutNumerators[conditionId] = new uint256[](outcomeSlotCount);
        emit ConditionPreparation(conditionId, oracle, questionId, outcomeSlotCount);
    }

    /// The oracle (msg.sender) reports the payout vector of its question, once.
    function reportPayouts(bytes32 questionId, uint256[] calldata payouts) external {
        uint256 outcomeSlotCount = payouts.length;
        bytes32 conditionId = getConditionId(msg.sender, questionId, outcomeSlotCount);
        require(payoutNumerators[conditionId].length == outcomeSlotCount, "condition not prepared or found");
        require(payoutDenominator[conditionId] == 0, "payout denominator already set");
        uint256 den = 0;
        for (uint256 i = 0; i < outcomeSlotCount; i++) {
            den += payouts[i];
            payoutNumerators[conditionId][i] = payouts[i];
        }
        require(den > 0, "payout is all zeroes");
        payoutDenominator[conditionId] = den;
        emit ConditionResolution(conditionId, msg.sender, questionId, outcomeSlotCount, payouts);
    }

    /// Burns the caller's whole balance of each index set's position and pays its share of the collateral.
    function redeemPositions(IERC20 collateralToken, bytes32 parentCollectionId, bytes32 conditionId, uint256[] calldata indexSets) external {
        uint256 den = payoutDenominator[conditionId];
        require(den > 0, "result for condition not received yet");
        uint256 outcomeSlotCount = payoutNumerators[conditionId].length;
        uint256 totalPayout = 0;
        for (uint256 i = 0; i < indexSets.length; i++) {
            uint256 indexSet = indexSets[i];
            require(indexSet > 0 && indexSet < (1 << outcomeSlotCount), "got invalid index set");
            uint256 positionId = getPositionId(collateralToken, getCollectionId(parentCollectionId, conditionId, indexSet));
            uint256 numerator = 0;
            for (uint256 j = 0; j < outcomeSlotCount; j++) if (indexSet & (1 << j) != 0) numerator += payoutNumerators[conditionId][j];
            uint256 stake = balances[positionId][msg.sender];
            if (stake > 0) {
                totalPayout += (stake * numerator) / den;
                balances[positionId][msg.sender] = 0;
                emit TransferSingle(msg.sender, msg.sender, address(0), positionId, stake);
            }
        }
        if (totalPayout > 0) require(collateralToken.transfer(msg.sender, totalPayout), "could not transfer payout to message sender");
        emit PayoutRedemption(msg.sender, collateralToken, parentCollectionId, conditionId, indexSets, totalPayout);
    }

    /// Test only: outcome tokens out of thin air (the test deposits matching collateral here).
    function mint(address to, uint256 id, uint256 amount) external {
        balances[id][to] += amount;
        emit TransferSingle(msg.sender, address(0), to, id, amount);
    }
}
