// libFuzzer harness for the authentication challenge parser, the Digest challenge builder, and the
// raw-response decision (forwarded 401 -> parsed, validated, chosen).
//
// Two builds of the same file:
// - scripts/fuzz builds it with `-sanitize=fuzzer -DCOUNTERSIGN_LIBFUZZER`: coverage
//   instrumentation, and `main` hands control to libFuzzer's driver (`LLVMFuzzerRunDriver`), which
//   takes libFuzzer's usual flags and calls `LLVMFuzzerTestOneInput`. Going through the driver,
//   rather than letting libFuzzer's archive supply `main`, is what works under SwiftPM: it links
//   executables with `main` aliased to the module's own entry point.
// - Built like any other target (swift build, CI), `main` replays the files (or directories of
//   files) named on the command line, so a crashing input found by the fuzzer can be reproduced
//   in a debugger without the fuzzer toolchain flags, and the target always compiles and links.
import CountersignCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs one input through everything that consumes untrusted challenge bytes.
///
/// A newline separates field values, so inputs also exercise repeated header lines. The only
/// acceptable outcomes are challenges or a CountersignError; typed throws make anything else
/// impossible, and a trap (overflow, out-of-bounds index, failed precondition) is the crash the
/// fuzzer is looking for. Invariants are checked with `precondition` so they trap too.
func exercise(_ bytes: [UInt8]) {
    let values = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    let parser = AuthenticationChallengeParser()
    let challenges: [AuthenticationChallenge]
    do {
        challenges = try parser.parse(utf8FieldValues: values)
    } catch {
        precondition(!error.code.rawValue.isEmpty)
        return
    }
    let limits = parser.limits
    precondition(challenges.count <= limits.maximumChallenges)

    // Serializing and re-parsing must give the same challenges.
    let serialized = challenges.map(\.headerValue)
    do {
        let reparsed = try AuthenticationChallengeParser(
            limits: .init(maximumFieldValueBytes: .max, maximumTotalBytes: .max)
        ).parse(serialized)
        precondition(reparsed == challenges, "round trip changed the challenges")
    } catch {
        preconditionFailure("serialized challenges failed to parse: \(error)")
    }

    for challenge in challenges {
        precondition(challenge.parameters.count <= limits.maximumParametersPerChallenge)
        precondition(challenge.token68 == nil || challenge.parameters.isEmpty)
        if challenge.scheme == .digest, let digest = try? DigestChallenge(challenge) {
            // Any validated challenge must be answerable; a toy hash keeps the fuzzer fast.
            let responder = DigestResponder { algorithm, input in
                var state: UInt64 = 0xcbf2_9ce4_8422_2325
                for byte in input { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
                return (0..<algorithm.digestLength).map { UInt8(truncatingIfNeeded: state >> (($0 % 8) * 8)) }
            }
            let answer = try? responder.authorization(
                for: digest, user: "fuzz", password: "p", method: "GET", requestURI: "/",
                entityBody: .bytes([]), cnonce: "0a4f113b", nonceCount: 1
            )
            precondition(answer != nil, "a validated Digest challenge could not be answered")
            if let answer {
                precondition((try? parser.parse(answer.headerValue)) != nil, "the Authorization value does not parse")
            }
        }
    }
    let selection = AuthenticationChallengeSelector().select(from: challenges) { _, _ in true }

    // The raw-response path: the same fields forwarded as a 401, decided by an engine that
    // releases a credential for every space. Either a challenge is chosen, or none is answerable
    // (reported, default handling), or every one is malformed (the only error besides the parser's).
    let response = RawResponse(
        taskId: "fuzz",
        status: 401,
        headers: values.map { ["WWW-Authenticate", String(decoding: $0, as: UTF8.self)] },
        request: ForwardedRequest(method: "GET", url: "https://fuzz.example/")
    )
    guard let context = try? response.validated() else { return }
    do {
        let plan = try ResponseDecider.plan(context, policy: .empty) { _ in
            DecisionPlan(disposition: .useCredential, credential: fuzzCredential, scope: .task, source: .policy, reason: "fuzz")
        }
        precondition(plan.selection.assessments.count == context.challenges.count)
        precondition(plan.chosen != nil || plan.reasonCode == .noSupportedChallenge, "an answerable challenge was not chosen")
        precondition(plan.chosen == nil || plan.plan.disposition == .useCredential)
    } catch {
        precondition(selection.isEveryChallengeMalformed || context.challenges != challenges, "\(error.code) though not every challenge is malformed")
    }
}

/// The credential the fuzzing engine releases; never used for anything but its presence.
let fuzzCredential = Credential(
    id: UUID(),
    tenantID: UUID(),
    kind: .password,
    attributes: CredentialAttributes(host: "fuzz.example", account: "fuzz"),
    domain: nil,
    label: nil,
    owner: .tenant(submittedBy: nil),
    secretVersion: 1,
    createdAt: Date(timeIntervalSince1970: 0),
    updatedAt: Date(timeIntervalSince1970: 0)
)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    exercise(bytes)
    return 0
}

#if COUNTERSIGN_LIBFUZZER
    /// libFuzzer's entry point for programs that keep their own `main` (compiler-rt, since LLVM 11).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    @main
    struct FuzzEntryPoint {
        static func main() {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzTestOneInput(data, size) })
        }
    }
#else
    /// Replays corpus files (or directories of them) without libFuzzer.
    @main
    struct FuzzEntryPoint {
        static func main() {
            let paths = CommandLine.arguments.dropFirst()
            guard !paths.isEmpty else {
                print("usage: ChallengeParserFuzzer FILE_OR_DIRECTORY...  (replays inputs; build with scripts/fuzz to fuzz)")
                exit(2)
            }
            var count = 0
            for path in paths {
                for file in files(at: String(path)) {
                    guard let bytes = read(file) else {
                        print("cannot read \(file)")
                        exit(1)
                    }
                    exercise(bytes)
                    count += 1
                }
            }
            print("replayed \(count) inputs without a crash")
        }

        private static func files(at path: String) -> [String] {
            guard let directory = opendir(path) else { return [path] }
            defer { closedir(directory) }
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if !name.hasPrefix(".") {
                    names.append(path + "/" + name)
                }
            }
            return names.sorted()
        }

        private static func read(_ path: String) -> [UInt8]? {
            guard let file = fopen(path, "rb") else { return nil }
            defer { fclose(file) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                bytes.append(contentsOf: buffer.prefix(count))
                if count < buffer.count { break }
            }
            return bytes
        }
    }
#endif
