/// A handler's attempt rules with the defaults filled in.
public struct SecurityCheckLimits: Hashable, Sendable {
    public var maxAttempts: Int
    public var attemptingStateExpirationSec: Int
    public var successStateExpirationSec: Int
    public var blockedStateExpirationSec: Int
    public var maxFailures: Int
    public var blockSeconds: Int

    public init(
        maxAttempts: Int,
        attemptingStateExpirationSec: Int,
        successStateExpirationSec: Int,
        blockedStateExpirationSec: Int,
        maxFailures: Int,
        blockSeconds: Int
    ) {
        self.maxAttempts = maxAttempts
        self.attemptingStateExpirationSec = attemptingStateExpirationSec
        self.successStateExpirationSec = successStateExpirationSec
        self.blockedStateExpirationSec = blockedStateExpirationSec
        self.maxFailures = maxFailures
        self.blockSeconds = blockSeconds
    }

    /// The credential's block schedule: every block lasts `blockSeconds`.
    public var blockSchedule: BlockSchedule {
        BlockSchedule(seconds: blockSeconds, incrementSeconds: 0, maximumSeconds: blockSeconds)
    }
}
