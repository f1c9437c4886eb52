import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a helper program to completion and captures what it printed.
///
/// `posix_spawn` and `waitpid` rather than Foundation's `Process`: on Linux, `Process`
/// learns that a child exited when a socket the child inherited is closed, and the server
/// that `pg_ctl start` leaves behind inherits it too, so `waitUntilExit()` would wait for
/// the database to stop.
enum ProcessRunner {
    struct Output: Sendable {
        var status: Int32
        var text: String
    }

    /// Runs `executable` (an absolute path) in `currentDirectory` and waits for it.
    ///
    /// Output (stdout and stderr) goes to a temporary file; stdin is `/dev/null`. The child
    /// starts with no blocked signals and default handlers (whatever the calling thread
    /// blocks, e.g. a Dispatch worker, is not passed on to a server that must obey
    /// `pg_ctl stop`). `PG*` variables are removed from its environment so that the
    /// developer's settings (PGHOST, PGPORT, PGDATABASE, ...) cannot redirect the tools.
    static func run(_ executable: String, _ arguments: [String], currentDirectory: String? = nil) throws -> Output {
        let outputPath = NSTemporaryDirectory() + "countersign-\(UUID().uuidString).out"
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            throw ProcessRunnerError(message: "cannot create \(outputPath): \(String(cString: strerror(errno)))")
        }
        defer {
            close(output)
            unlink(outputPath)
        }

        // posix_spawn has no portable "change directory" action: let a shell do it.
        let program: String
        let argv: [String]
        if let currentDirectory {
            program = "/bin/sh"
            argv = ["/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", currentDirectory, executable] + arguments
        } else {
            program = executable
            argv = [executable] + arguments
        }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
        environment["LC_ALL"] = "C"
        let environmentStrings = environment.map { "\($0.key)=\($0.value)" }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)

        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaultSignals, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid = pid_t()
        let spawned = withCStringArray(argv) { argv in
            withCStringArray(environmentStrings) { environment in
                posix_spawn(&pid, program, &actions, &attributes, argv, environment)
            }
        }
        guard spawned == 0 else {
            throw ProcessRunnerError(message: "cannot run \(executable): \(String(cString: strerror(spawned)))")
        }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw ProcessRunnerError(message: "cannot wait for \(executable): \(String(cString: strerror(errno)))")
            }
        }
        let text = FileManager.default.contents(atPath: outputPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return Output(status: exitStatus(status), text: text)
    }

    /// The exit code, or 128 + the signal number if the child was killed (as shells report it).
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// The first executable called `name` in `directories`, then in `PATH`.
    static func find(_ name: String, in directories: [String] = []) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let candidates = directories + path.split(separator: ":").map(String.init)
        for directory in candidates where !directory.isEmpty {
            let candidate = (directory as NSString).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        return nil
    }
}

/// Calls `body` with a NULL-terminated, mutable C string array (what `posix_spawn` takes).
private func withCStringArray<Result>(
    _ strings: [String],
    _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
) -> Result {
    let owned: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer {
        for pointer in owned { free(pointer) }
    }
    return owned.withUnsafeBufferPointer { body($0.baseAddress!) }
}

struct ProcessRunnerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
