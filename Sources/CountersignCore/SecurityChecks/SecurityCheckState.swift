public import Foundation

/// Where one client stands with one security check, kept centrally the way a MobileFirst
/// server keeps it for `CredentialsValidationSecurityCheck`: `attempting` while answers are
/// being tried, `blocked` after `maxAttempts` failed answers, `success` after an accepted
/// answer; each state lasts until `expiresAt`, after which it reads `expired` and counting
/// starts over.
///
/// The transitions are pure; storage applies them to a locked row, so that concurrent reports
/// never lose a count.
public struct SecurityCheckState: Hashable, Sendable {
    /// The states, in MobileFirst's own words.
    public enum Name: String, StrictStringEnum {
        case attempting
        case success
        case blocked
        /// The stored state's time is up; the next challenge starts a new attempting window.
        case expired
    }

    /// `attempting`, `success` or `blocked`: what was last set, whether or not it expired since.
    public var stored: Name
    /// Failed answers in the current attempting window, or those that led to the block.
    public var attempts: Int
    public var expiresAt: Date
    /// Every failure ever reported for this client and check.
    public var totalFailures: Int
    /// How many times this client was blocked for this check.
    public var blocks: Int

    public init(stored: Name, attempts: Int, expiresAt: Date, totalFailures: Int, blocks: Int) {
        self.stored = stored
        self.attempts = attempts
        self.expiresAt = expiresAt
        self.totalFailures = totalFailures
        self.blocks = blocks
    }

    /// The state as it reads at `now`.
    public func name(at now: Date) -> Name {
        expiresAt > now ? stored : .expired
    }

    public func isBlocked(at now: Date) -> Bool { name(at: now) == .blocked }

    /// Failed answers that still count at `now`.
    public func countedAttempts(at now: Date) -> Int {
        switch name(at: now) {
        case .attempting, .blocked: attempts
        case .success, .expired: 0
        }
    }

    /// Answers the client may still try before it is blocked.
    public func remainingAttempts(at now: Date, limits: SecurityCheckLimits) -> Int {
        name(at: now) == .blocked ? 0 : max(0, limits.maxAttempts - countedAttempts(at: now))
    }

    /// The server challenged the client: it is attempting (again), unless it is blocked. As a
    /// MobileFirst server, each challenge restarts the attempting window; a lapsed state or a
    /// success the server no longer honours starts counting from zero. A client whose failures
    /// already reach `maxAttempts` (an admin lowered it) is blocked now, as its last failure would
    /// have blocked it under the new limit: left attempting, it got no answer and no block, each
    /// challenge pushing its window on.
    public static func challenged(_ current: Self?, at now: Date, limits: SecurityCheckLimits) -> Self {
        var state = current ?? Self(stored: .expired, attempts: 0, expiresAt: now, totalFailures: 0, blocks: 0)
        switch state.name(at: now) {
        case .blocked:
            return state
        case .attempting:
            if state.attempts >= limits.maxAttempts {
                state.block(at: now, limits: limits)
                return state
            }
        case .success, .expired:
            state.attempts = 0
        }
        state.stored = .attempting
        state.expiresAt = now.addingTimeInterval(Double(limits.attemptingStateExpirationSec))
        return state
    }

    /// Blocked for `blockedStateExpirationSec`; 0 never blocks: the attempts start over at once,
    /// and no block is counted.
    private mutating func block(at now: Date, limits: SecurityCheckLimits) {
        stored = .blocked
        expiresAt = now.addingTimeInterval(Double(limits.blockedStateExpirationSec))
        if limits.blockedStateExpirationSec > 0 { blocks += 1 }
    }

    /// The server refused an answer: one more failed attempt, and the block at `maxAttempts`.
    /// Not while the client is in its success state: a challenge would have ended it before any
    /// answer was given, so the answer refused came before the success, and a newer answer's
    /// acceptance stands (as ``succeeded(_:at:limits:)`` leaves a block alone). The failure is
    /// still in `totalFailures`, and the credential's counter counts it.
    public static func failed(_ current: Self?, at now: Date, limits: SecurityCheckLimits) -> Self {
        var state = current ?? Self(stored: .expired, attempts: 0, expiresAt: now, totalFailures: 0, blocks: 0)
        let name = state.name(at: now)
        if name == .success {
            state.totalFailures += 1
            return state
        }
        state.attempts = state.countedAttempts(at: now) + 1
        state.totalFailures += 1
        if name == .blocked { return state }
        if state.attempts >= limits.maxAttempts {
            state.block(at: now, limits: limits)
        } else {
            state.stored = .attempting
            state.expiresAt = now.addingTimeInterval(Double(limits.attemptingStateExpirationSec))
        }
        return state
    }

    /// The server accepted an answer: success, for `successStateExpirationSec`. Not while the
    /// client is blocked: no answer is given then, so the one accepted came before the block,
    /// and as in MobileFirst's `CredentialsValidationSecurityCheck` a block lasts its
    /// `blockedStateExpirationSec` whatever a late report says.
    public static func succeeded(_ current: Self?, at now: Date, limits: SecurityCheckLimits) -> Self {
        var state = current ?? Self(stored: .expired, attempts: 0, expiresAt: now, totalFailures: 0, blocks: 0)
        if state.isBlocked(at: now) { return state }
        state.stored = .success
        state.attempts = 0
        state.expiresAt = now.addingTimeInterval(Double(limits.successStateExpirationSec))
        return state
    }
}
