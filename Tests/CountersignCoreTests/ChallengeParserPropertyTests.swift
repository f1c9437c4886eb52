import CountersignCore
import Testing

/// Builds random well-formed challenges and renders them with random (legal) spelling.
struct ChallengeGenerator {
    var random: ChallengeSeededGenerator

    init(seed: UInt64) {
        random = ChallengeSeededGenerator(seed: seed)
    }

    private static let tokenCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
    private static let token68Characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/")
    // Characters that stress quoting: separators, escapes, whitespace, non-ASCII of every length.
    private static let valueCharacters = Array("aZ09 \t,;=\"\\/()<>@:?[]{}'é東😀") + ["\u{80}", "\u{FFFD}"]
    private static let parameterNames = ["realm", "nonce", "qop", "algorithm", "opaque", "a", "title", "x-y"]

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    mutating func chance(_ percent: Int) -> Bool {
        int(0...99) < percent
    }

    mutating func token(_ lengths: ClosedRange<Int> = 1...8) -> String {
        String((0..<int(lengths)).map { _ in Self.tokenCharacters.randomElement(using: &random)! })
    }

    mutating func token68() -> String {
        String((0..<int(1...24)).map { _ in Self.token68Characters.randomElement(using: &random)! })
            + String(repeating: "=", count: int(0...2))
    }

    mutating func value() -> String {
        switch int(0...9) {
        case 0: ""
        case 1...3: token()
        default: String((0..<int(1...12)).map { _ in Self.valueCharacters.randomElement(using: &random)! })
        }
    }

    mutating func challenge() -> AuthenticationChallenge {
        let scheme = chance(50) ? ["Basic", "Digest", "NTLM", "Negotiate", "Bearer"].randomElement(using: &random)! : token()
        if chance(20) {
            return try! AuthenticationChallenge(scheme: scheme, token68: token68())
        }
        let parameters = (0..<int(0...5)).map { _ in
            // A small name pool makes duplicates common, which the parser must keep.
            let name = chance(70) ? Self.parameterNames.randomElement(using: &random)! : token().lowercased()
            return try! AuthenticationParameter(name: name, value: value())
        }
        return try! AuthenticationChallenge(scheme: scheme, parameters: parameters)
    }

    mutating func challenges() -> [AuthenticationChallenge] {
        (0..<int(0...5)).map { _ in challenge() }
    }

    private mutating func whitespace(_ range: ClosedRange<Int>) -> String {
        String((0..<int(range)).map { _ in chance(80) ? " " : "\t" })
    }

    /// A list separator: OWS, a comma, and sometimes empty list elements.
    private mutating func separator() -> String {
        var text = whitespace(0...2) + ","
        while chance(15) {
            text += whitespace(0...1) + ","
        }
        return text + whitespace(0...2)
    }

    private mutating func randomCase(_ text: String) -> String {
        String(text.map { chance(30) ? Character($0.uppercased()) : $0 })
    }

    private mutating func render(value: String) -> String {
        if AuthenticationChallengeGrammar.isToken(value), chance(50) {
            return value
        }
        var quoted = "\""
        for character in value {
            if character == "\"" || character == "\\" || (character.isASCII && character.isLetter && chance(10)) {
                quoted += "\\"
            }
            quoted.append(character)
        }
        return quoted + "\""
    }

    private mutating func render(_ challenge: AuthenticationChallenge) -> String {
        var text = challenge.schemeName
        if let token68 = challenge.token68 {
            return text + whitespace(1...2) + token68
        }
        for (index, parameter) in challenge.parameters.enumerated() {
            text += index == 0 ? whitespace(1...2) : separator()
            text += randomCase(parameter.name) + whitespace(0...1) + "=" + whitespace(0...1) + render(value: parameter.value)
        }
        return text
    }

    /// Field values that must parse to `challenges`: split across fields at random challenge
    /// boundaries, with random whitespace, empty elements and letter case.
    mutating func render(_ challenges: [AuthenticationChallenge]) -> [String] {
        var fields: [String] = []
        var current = chance(20) ? separator() : ""
        for (index, challenge) in challenges.enumerated() {
            if index > 0 {
                if chance(30) {
                    fields.append(current)
                    current = ""
                } else {
                    current += separator()
                }
            }
            current += render(challenge)
        }
        if chance(20) {
            current += separator()
        }
        fields.append(current)
        if chance(10) {
            fields.insert("", at: int(0...fields.count))
        }
        return fields
    }

    /// `seed` after one to four random byte-level mutations biased to the grammar's delimiters.
    mutating func mutate(_ seed: [UInt8]) -> [UInt8] {
        let interesting: [UInt8] = Array("\"\\,= \t=aZ/~".utf8) + [0x00, 0x0D, 0x0A, 0x7F, 0x80, 0xC3, 0xFF]
        var bytes = seed
        for _ in 0..<int(1...4) {
            let position = bytes.isEmpty ? 0 : int(0...bytes.count - 1)
            switch int(0...5) {
            case 0:
                bytes.insert(interesting.randomElement(using: &random)!, at: int(0...bytes.count))
            case 1 where !bytes.isEmpty:
                bytes.remove(at: position)
            case 2 where !bytes.isEmpty:
                bytes[position] ^= UInt8(1) << UInt8(int(0...7))
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + int(1...16))
                bytes.insert(contentsOf: bytes[position..<end], at: int(0...bytes.count))
            case 4 where !bytes.isEmpty:
                bytes.removeSubrange(int(0...bytes.count)...)
            default:
                // Overwrite one byte with a delimiter (or append any byte to an empty input).
                if bytes.isEmpty {
                    bytes.append(UInt8.random(in: 0...255, using: &random))
                } else {
                    bytes[position] = interesting.randomElement(using: &random)!
                }
            }
        }
        return bytes
    }

    /// Short random byte strings over an alphabet that is mostly grammar delimiters.
    mutating func noise() -> [[UInt8]] {
        let alphabet: [UInt8] = Array("\"\\,=  \t=abcXY/+-.~!(@".utf8) + [0x00, 0x0D, 0x7F, 0xC3, 0xA9, 0xFF]
        return (0..<int(1...3)).map { _ in
            (0..<int(0...60)).map { _ in alphabet.randomElement(using: &random)! }
        }
    }
}

/// The grammar predicate the generator needs, spelled out here so the tests do not reach into
/// the module's internals.
enum AuthenticationChallengeGrammar {
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
    }
}

@Suite("Challenge parser properties")
struct ChallengeParserPropertyTests {
    let parser = AuthenticationChallengeParser()
    /// Re-parses serialized output, which may exceed the input limits (quoting adds bytes).
    let unlimited = AuthenticationChallengeParser(limits: .init(maximumFieldValueBytes: .max, maximumTotalBytes: .max))

    static let seeds: [UInt64] = [1, 2, 3, 4, 0xC0FFEE, 0xDEAD_BEEF, 20_251_123, 7_616]

    /// What must hold for anything the parser accepted: the limits, the token68/parameters
    /// exclusion, and a serialization that parses back to the same challenges, spelling included.
    func checkAccepted(_ challenges: [AuthenticationChallenge], input: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard challenges.count <= parser.limits.maximumChallenges,
            challenges.allSatisfy({ $0.parameters.count <= parser.limits.maximumParametersPerChallenge }),
            challenges.allSatisfy({ $0.token68 == nil || $0.parameters.isEmpty })
        else {
            Issue.record("invariant broken for \(input)", sourceLocation: sourceLocation)
            return
        }
        do {
            let perChallenge = try unlimited.parse(challenges.map(\.headerValue))
            let oneField = try unlimited.parse(AuthenticationChallenge.headerValue(challenges))
            if perChallenge != challenges || oneField != challenges || perChallenge.map(\.schemeName) != challenges.map(\.schemeName) {
                Issue.record("round trip changed \(input) into \(perChallenge)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("serialization of \(input) did not parse: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("generated challenges parse back exactly, however they are spelled", arguments: seeds)
    func generatedRoundTrip(seed: UInt64) {
        var generator = ChallengeGenerator(seed: seed)
        for _ in 0..<1_000 {
            let challenges = generator.challenges()
            let fields = generator.render(challenges)
            do {
                let parsed = try parser.parse(fields)
                if parsed != challenges {
                    Issue.record("seed \(seed): \(fields) parsed as \(parsed), expected \(challenges)")
                    return
                }
                checkAccepted(parsed, input: "\(fields)")
            } catch {
                Issue.record("seed \(seed): \(fields) was refused: \(error)")
                return
            }
        }
    }

    @Test("mutated real-world fields give challenges or a CountersignError", arguments: seeds)
    func mutatedFields(seed: UInt64) {
        var generator = ChallengeGenerator(seed: seed)
        let samples = sampleChallengeFields.map { Array($0.utf8) }
        var accepted = 0
        var refusedCodes: Set<String> = []
        for _ in 0..<3_000 {
            let mutated = (0..<generator.int(1...2)).map { _ in generator.mutate(samples.randomElement(using: &generator.random)!) }
            do {
                let parsed = try parser.parse(utf8FieldValues: mutated)
                accepted += 1
                checkAccepted(parsed, input: "\(mutated)")
            } catch {
                // Typed throws already guarantee a CountersignError; its message must still be useful.
                refusedCodes.insert(error.code.rawValue)
                if error.message.isEmpty { Issue.record("empty message for \(error.code)") }
            }
        }
        // Both outcomes must actually occur, or the mutations are not testing anything.
        #expect(accepted > 100)
        #expect(refusedCodes.contains(CountersignError.Code.malformedChallenge.rawValue))
        #expect(
            refusedCodes.isSubset(of: [
                CountersignError.Code.malformedChallenge.rawValue, CountersignError.Code.tooManyChallenges.rawValue,
                CountersignError.Code.tooManyParameters.rawValue, CountersignError.Code.challengeTooLarge.rawValue,
            ]))
    }

    @Test("random noise gives challenges or a CountersignError", arguments: seeds)
    func noise(seed: UInt64) {
        var generator = ChallengeGenerator(seed: seed)
        for _ in 0..<3_000 {
            let fields = generator.noise()
            do {
                let parsed = try parser.parse(utf8FieldValues: fields)
                checkAccepted(parsed, input: "\(fields)")
            } catch {
                if error.message.isEmpty { Issue.record("empty message for \(error.code)") }
            }
        }
    }

    @Test("every Digest challenge that validates gets an answer that parses back", arguments: seeds)
    func digestAnswersRoundTrip(seed: UInt64) throws {
        var generator = ChallengeGenerator(seed: seed)
        let responder = DigestResponder(hash: openSSLDigestHash)
        var answered = 0
        for _ in 0..<300 {
            var parameters: [AuthenticationParameter] = [
                try AuthenticationParameter(name: "realm", value: generator.value()),
                try AuthenticationParameter(name: "nonce", value: generator.value()),
            ]
            if generator.chance(50) { parameters.append(try AuthenticationParameter(name: "opaque", value: generator.value())) }
            if generator.chance(70) {
                parameters.append(
                    try AuthenticationParameter(
                        name: "qop",
                        value: ["auth", "auth-int", "auth,auth-int", "auth-int, auth"].randomElement(using: &generator.random)!))
            }
            let algorithm = DigestAlgorithm.allCases.randomElement(using: &generator.random)!
            if !(algorithm.isSession && !parameters.contains { $0.name == "qop" }) {
                parameters.append(try AuthenticationParameter(name: "algorithm", value: algorithm.name))
            }
            if generator.chance(30) { parameters.append(try AuthenticationParameter(name: "userhash", value: "true")) }
            let fields = generator.render([try AuthenticationChallenge(scheme: "Digest", parameters: parameters)])
            let parsed = try #require(try parser.parse(fields).first)
            let digest = try DigestChallenge(parsed)

            let user = ["Mufasa", "Jäsøn Doe", #"quote" back\slash"#, "東京"].randomElement(using: &generator.random)!
            let answer = try responder.authorization(
                for: digest, user: user, password: generator.value(), method: "POST", requestURI: "/a?b=\"c\"",
                entityBody: .bytes(Array(generator.value().utf8)), cnonce: "0a4f113b", nonceCount: UInt32(generator.int(1...1000))
            )
            let echoed = try #require(try parser.parse(answer.headerValue).first)
            #expect(echoed.scheme == .digest)
            #expect(echoed.duplicateParameterName == nil)
            #expect(echoed.parameter("realm") == digest.realm)
            #expect(echoed.parameter("nonce") == digest.nonce)
            #expect(echoed.parameter("opaque") == digest.opaque)
            #expect(echoed.parameter("uri") == "/a?b=\"c\"")
            #expect(echoed.parameter("response") == answer.response)
            #expect(echoed.parameter("qop") == answer.qop?.rawValue)
            if digest.userhash {
                #expect(echoed.parameter("username")?.utf8.count == digest.algorithm.hashAlgorithm.digestLength * 2)
            } else if user.utf8.allSatisfy({ $0 < 0x80 }) {
                #expect(echoed.parameter("username") == user)
            } else {
                #expect(echoed.parameter("username*")?.hasPrefix("UTF-8''") == true)
                #expect(echoed.parameter("username") == nil)
            }
            answered += 1
        }
        #expect(answered == 300)
    }
}
