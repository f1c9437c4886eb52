import Foundation
import Synchronization

/// Where the PostgreSQL server programs (`initdb`, `pg_ctl`, `createdb`) are.
struct PostgresBinaries: Sendable {
    let directory: String

    func path(_ program: String) -> String {
        (directory as NSString).appendingPathComponent(program)
    }

    private static let cached = Mutex<PostgresBinaries?>(nil)

    /// Takes `COUNTERSIGN_PG_BINDIR` when it is set, and refuses it when it lacks `initdb` or
    /// `pg_ctl` (an operator who names a directory means that one); else looks, in order, at
    /// `pg_config --bindir`, the highest `/usr/lib/postgresql/<version>/bin` (Debian, Ubuntu)
    /// and `PATH`. A directory counts only if it holds both.
    static func locate() throws -> PostgresBinaries {
        if let found = cached.withLock({ $0 }) { return found }
        if let explicit = ProcessInfo.processInfo.environment["COUNTERSIGN_PG_BINDIR"], !explicit.isEmpty, !isServerDirectory(explicit) {
            throw ProcessRunnerError(message: "COUNTERSIGN_PG_BINDIR is \(explicit), which holds no initdb and pg_ctl programs")
        }
        guard let directory = candidateDirectories().first(where: isServerDirectory) else {
            throw ProcessRunnerError(
                message: "cannot find the PostgreSQL server programs (initdb, pg_ctl): install the server "
                    + "(e.g. apt-get install postgresql) or set COUNTERSIGN_PG_BINDIR"
            )
        }
        let binaries = PostgresBinaries(directory: directory)
        cached.withLock { $0 = binaries }
        return binaries
    }

    private static func candidateDirectories() -> [String] {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["COUNTERSIGN_PG_BINDIR"], !explicit.isEmpty {
            candidates.append(explicit)
        }
        if let pgConfig = ProcessRunner.find("pg_config"),
            let output = try? ProcessRunner.run(pgConfig, ["--bindir"]), output.status == 0
        {
            candidates.append(output.text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let debianRoot = "/usr/lib/postgresql"
        if let versions = try? FileManager.default.contentsOfDirectory(atPath: debianRoot) {
            let sorted = versions.compactMap { name in Double(name).map { (name, $0) } }.sorted { $0.1 > $1.1 }
            candidates += sorted.map { "\(debianRoot)/\($0.0)/bin" }
        }
        if let initdb = ProcessRunner.find("initdb") {
            candidates.append((initdb as NSString).deletingLastPathComponent)
        }
        return candidates
    }

    private static func isServerDirectory(_ directory: String) -> Bool {
        let manager = FileManager.default
        return manager.isExecutableFile(atPath: (directory as NSString).appendingPathComponent("initdb"))
            && manager.isExecutableFile(atPath: (directory as NSString).appendingPathComponent("pg_ctl"))
    }
}
