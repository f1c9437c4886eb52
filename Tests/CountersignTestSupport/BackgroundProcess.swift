import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A program a test runs beside itself (a TLS server), started with `posix_spawn` for the
/// reasons `ChildProcess` gives, with no blocked signals, its output discarded, and ended with
/// `terminate()`.
public struct BackgroundProcess: Sendable {
    /// Its process id.
    public let pid: Int32

    /// Starts `executable` (a path) with `arguments`; standard input is `/dev/null`.
    public init(_ executable: String, _ arguments: [String]) throws {
        let argv = [executable] + arguments
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        var pid = pid_t()
        let spawned = Self.withCStrings(argv) { argv in
            Self.withCStrings(environment) { environment in
                posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
            }
        }
        guard spawned == 0 else { throw ChildProcessError("cannot run \(executable): \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    /// Whether it has ended (it is reaped then).
    public func hasExited() -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// Ends it with SIGKILL and reaps it.
    public func terminate() {
        guard kill(pid, SIGKILL) == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
