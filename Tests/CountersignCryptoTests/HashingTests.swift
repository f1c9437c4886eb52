import CountersignCrypto
import Testing

@Suite("Digest, HMAC and constant-time comparison")
struct HashingTests {
    // `echo -n abc | openssl dgst -ALG` and the FIPS 180-4 examples.
    @Test(arguments: [
        (HashAlgorithm.md5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
        (.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (.sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            .sha512, "abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        (.sha512_256, "abc", "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
        (.md5, "", "d41d8cd98f00b204e9800998ecf8427e"),
        (.sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (.sha512_256, "", "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a"),
    ])
    func digestVectors(algorithm: HashAlgorithm, input: String, expected: String) {
        let digest = Digest.hash(algorithm, input)
        #expect(digest.hexString == expected)
        #expect(digest.count == algorithm.digestLength)
        #expect(Digest.hash(algorithm, Array(input.utf8)) == digest)
    }

    static let hmacVectors: [([UInt8], [UInt8], String, String)] = [
        (
            [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        ),
        (
            [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xcd, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131),
            Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8
            ),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"
        ),
    ]

    // RFC 4231 test cases 1, 2, 3, 4, 6 and 7 (case 5 is truncation, below).
    @Test(arguments: Self.hmacVectors)
    func hmacRFC4231(key: [UInt8], message: [UInt8], sha256: String, sha512: String) {
        #expect(HMAC.authenticationCode(.sha256, key: key, message: message).hexString == sha256)
        #expect(HMAC.authenticationCode(.sha512, key: key, message: message).hexString == sha512)
    }

    /// Debian's default OpenSSL provider computes every algorithm Countersign uses; a FIPS-only
    /// one would report MD5 missing, and Digest answers then avoid it.
    @Test func everyAlgorithmIsAvailableHere() {
        for algorithm in HashAlgorithm.allCases {
            #expect(Digest.isAvailable(algorithm), "\(algorithm)")
        }
    }

    @Test func hmacRFC4231TruncatedOutput() {
        let code = HMAC.authenticationCode(.sha256, key: [UInt8](repeating: 0x0c, count: 20), message: Array("Test With Truncation".utf8))
        #expect(Array(code.prefix(16)).hexString == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test func hmacWithEmptyKeyAndMessage() {
        // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
        #expect(
            HMAC.authenticationCode(.sha256, key: [], message: []).hexString == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        )
    }

    @Test(arguments: HashAlgorithm.allCases)
    func hmacLengthMatchesDigest(algorithm: HashAlgorithm) {
        #expect(HMAC.authenticationCode(algorithm, key: [1, 2, 3], message: [4, 5, 6]).count == algorithm.digestLength)
    }

    @Test(arguments: [
        ([UInt8](), [UInt8](), true),
        ([1, 2, 3], [1, 2, 3], true),
        ([1, 2, 3], [1, 2, 4], false),
        ([0, 2, 3], [1, 2, 3], false),
        ([1, 2, 3], [1, 2], false),
        ([1, 2], [1, 2, 3], false),
        ([], [0], false),
    ])
    func constantTimeEquals(a: [UInt8], b: [UInt8], equal: Bool) {
        #expect(ConstantTime.equals(a, b) == equal)
        #expect(ConstantTime.equals(b, a) == equal)
    }

    @Test func constantTimeEqualsOnMACs() {
        let key = Array("key".utf8)
        let code = HMAC.authenticationCode(.sha256, key: key, message: Array("message".utf8))
        #expect(ConstantTime.equals(code, HMAC.authenticationCode(.sha256, key: key, message: Array("message".utf8))))
        #expect(!ConstantTime.equals(code, HMAC.authenticationCode(.sha256, key: key, message: Array("massage".utf8))))
    }
}
