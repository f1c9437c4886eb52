import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program to its end for a test, with `posix_spawn` and `waitpid`.
///
/// Not Foundation's `Process`: on Linux it learns that a child exited when a socket the child
/// inherited is closed, and any process spawned meanwhile by another thread (a PostgreSQL server
/// of `TestDatabase`, started with `posix_spawn`) inherits that socket too. The waiting test then
/// hangs until that server stops, with the child long gone (a zombie). Output goes to files
/// opened close-on-exec, so no other child can hold them open either.
public enum ChildProcess {
    /// How a program ended, and what it printed.
    public struct Output: Sendable {
        /// The exit status, or 128 + the signal number when a signal ended it (as shells say).
        public var status: Int32
        public var standardOutput: [UInt8]
        public var standardError: [UInt8]

        public var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
        public var errorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// Runs `executable` (a path) with `arguments` and waits for it, blocking the calling thread.
    /// `environment` replaces the process's own when given.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        workingDirectory: String? = nil,
        standardInput: [UInt8]? = nil,
        environment: [String: String]? = nil
    ) throws -> Output {
        let scratch = NSTemporaryDirectory() + "countersign-child-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let outputPath = scratch + "/stdout"
        let errorPath = scratch + "/stderr"
        let inputPath = scratch + "/stdin"
        try Data(standardInput ?? []).write(to: URL(fileURLWithPath: inputPath))
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let error = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            if output >= 0 { close(output) }
            if error >= 0 { close(error) }
        }
        guard output >= 0, error >= 0 else { throw ChildProcessError("cannot create output files in \(scratch)") }

        // posix_spawn has no portable "change directory" action: let a shell do it.
        let program: String
        let argv: [String]
        if let workingDirectory {
            program = "/bin/sh"
            argv = ["/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", workingDirectory, executable] + arguments
        } else {
            program = executable
            argv = [executable] + arguments
        }
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, error, 2)
        // The calling thread may block signals (a Dispatch worker does); the child must not inherit that.
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        var pid = pid_t()
        let spawned = withCStrings(argv) { argv in
            withCStrings(environmentStrings) { environment in
                posix_spawn(&pid, program, &actions, &attributes, argv, environment)
            }
        }
        guard spawned == 0 else { throw ChildProcessError("cannot run \(executable): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ChildProcessError("cannot wait for \(executable): \(String(cString: strerror(errno)))") }
        }
        let signal = status & 0x7f
        return Output(
            status: signal == 0 ? (status >> 8) & 0xff : 128 + signal,
            standardOutput: (FileManager.default.contents(atPath: outputPath)).map { [UInt8]($0) } ?? [],
            standardError: (FileManager.default.contents(atPath: errorPath)).map { [UInt8]($0) } ?? []
        )
    }

    /// ``run(_:_:workingDirectory:standardInput:environment:)`` on a thread of its own, so that
    /// waiting never holds one of Swift concurrency's few threads (the program may need work
    /// done in this process, such as a test service answering it).
    public static func runDetached(
        _ executable: String,
        _ arguments: [String],
        workingDirectory: String? = nil,
        standardInput: [UInt8]? = nil,
        environment: [String: String]? = nil
    ) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result(catching: {
                        try run(executable, arguments, workingDirectory: workingDirectory, standardInput: standardInput, environment: environment)
                    })
                )
            }.start()
        }
    }

    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A program could not be started or waited for.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
