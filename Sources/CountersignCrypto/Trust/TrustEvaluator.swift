internal import COpenSSL
import Foundation

/// Decides whether a TLS server's certificate chain is trusted, with OpenSSL's verifier
/// (`X509_verify_cert`), the way a TLS client would.
///
/// Checks done:
/// - a path from the leaf to a trust anchor (the request's extra anchors and, if asked, the
///   system CA bundle), using the presented certificates as untrusted intermediates; an
///   anchor need not be self-signed (`X509_V_FLAG_PARTIAL_CHAIN`); at most
///   `Certificate.maximumChainLength` presented certificates;
/// - every signature on that path, basic constraints (issuers must be CAs, path length),
///   name constraints, and critical extensions OpenSSL does not understand;
/// - the TLS server purpose: extended key usage must allow `serverAuth` (or be absent), key
///   usage must allow a TLS server's use of its key, issuers must be allowed to sign certificates,
///   and the leaf must not be a CA certificate unless it is its own anchor;
/// - validity periods of every certificate at the request's time, unless `allowExpired`;
/// - the host: for a DNS name, the leaf's DNS subject alternative names only (never the
///   subject common name, as browsers and Apple's clients), case-insensitively, with a
///   wildcard allowed only as the whole leftmost label (`*.example.com` matches
///   `a.example.com`, not `a.b.example.com`, not `example.com`, and `a*.example.com` matches
///   nothing); for an IP literal (IPv4 or IPv6), the leaf's IP address SANs only;
/// - security level 2 (112-bit strength) on every certificate of the path: RSA keys under
///   2048 bits, EC keys under 224 bits, and signatures made with SHA-1 or MD5 are refused (an
///   anchor's self-signature is never checked, so its digest does not matter);
/// - SPKI SHA-256 pins, when configured, against every certificate of the verified path.
///
/// Checks not done: revocation (no CRL, no OCSP, no OCSP stapling: the service never sees the
/// TLS handshake), Certificate Transparency (no SCTs are checked), certificate policies
/// (no policy OIDs are required), and the stricter RFC 5280 profile checks of
/// `X509_V_FLAG_X509_STRICT` (which reject real-world certificates that clients accept).
///
/// `allowExpired` is implemented with a verification callback that excuses exactly
/// `X509_V_ERR_CERT_HAS_EXPIRED` and `X509_V_ERR_CERT_NOT_YET_VALID`, and nothing else, rather
/// than `X509_V_FLAG_NO_CHECK_TIME`: the flag also turns off the time checks of CRLs and
/// makes OpenSSL stop preferring currently valid issuers when it builds the path, whereas the
/// callback leaves path building and every other check exactly as without `allowExpired`.
/// Malformed validity fields are still refused.
public enum TrustEvaluator {
    /// Evaluates `request`. Never throws: every problem is a `TrustFailure` in the result.
    public static func evaluate(_ request: TrustEvaluationRequest) -> TrustEvaluation {
        let time = request.evaluationTime
        func failed(_ failure: TrustFailure, leaf: Certificate? = nil, chain: [Certificate] = []) -> TrustEvaluation {
            TrustEvaluation(failure: failure, verifiedChain: chain, leafSubject: leaf?.subject, matchedPin: nil, evaluationTime: time)
        }

        let presented: [Certificate]
        switch request.presented {
        case .certificates(let certificates):
            presented = certificates
        case .der(let der):
            guard der.count <= Certificate.maximumChainLength else {
                return failed(
                    TrustFailure(
                        .invalidChain,
                        detail: "chain_too_long: \(der.count) certificates presented, at most \(Certificate.maximumChainLength) accepted"
                    )
                )
            }
            var parsed: [Certificate] = []
            for (index, bytes) in der.enumerated() {
                do {
                    parsed.append(try Certificate(derBytes: bytes))
                } catch {
                    return failed(TrustFailure(.malformedCertificate, detail: "certificate \(index): \(error.debugDescription)", depth: index))
                }
            }
            presented = parsed
        }
        guard let leaf = presented.first else {
            return failed(TrustFailure(.malformedCertificate, detail: "no certificate presented"))
        }
        guard presented.count <= Certificate.maximumChainLength else {
            return failed(
                TrustFailure(
                    .invalidChain,
                    detail: "chain_too_long: \(presented.count) certificates presented, at most \(Certificate.maximumChainLength) accepted"
                ),
                leaf: leaf
            )
        }

        let target: VerificationHost
        switch VerificationHost.parse(request.host) {
        case .success(let host): target = host
        case .failure(let failure): return failed(failure, leaf: leaf)
        }

        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        do throws(CryptoError) {
            // Anchors are a trusted stack rather than store contents: the system anchors are
            // parsed once per process (SystemAnchors) and only referenced here, and the
            // store stays empty, so nothing is looked up on disk during an evaluation.
            var anchors = request.extraAnchors.map(\.handle)
            if request.useSystemAnchors { anchors += SystemAnchors.certificates }
            let trusted = try X509Stack(anchors)
            let store = try X509StoreHandle()
            let untrusted = try X509Stack(presented.dropFirst().map(\.handle))
            let context = try X509StoreContextHandle()
            guard X509_STORE_CTX_init(context.pointer, store.pointer, leaf.handle.pointer, untrusted.pointer) == 1 else {
                throw CryptoError(.internalFailure, "OpenSSL could not initialise verification", detail: OpenSSLErrorQueue.drainDescription())
            }
            X509_STORE_CTX_set0_trusted_stack(context.pointer, trusted.pointer)
            try configure(context: context, for: request, host: target)

            let result = X509_verify_cert(context.pointer)
            let built = builtPathToAnchor(context)
            let evaluation: TrustEvaluation
            if result == 1, leaf.isCA, built.count > 1 {
                // OpenSSL's server purpose lets a CA certificate serve; browsers (mozilla::pkix:
                // CA_CERT_USED_AS_END_ENTITY) and the CA/Browser Forum's rules do not. An answer
                // replaces the client's own evaluation, so it must not be the laxer one. A
                // self-signed certificate trusted as its own anchor is exempt: it is no issued leaf.
                evaluation = failed(
                    TrustFailure(.badKeyUsage, detail: "the server's certificate is a CA certificate (basic constraints cA=TRUE)", depth: 0),
                    leaf: leaf,
                    chain: built
                )
            } else if result == 1 {
                evaluation = checkPins(request.pins, chain: built, leaf: leaf, time: time)
            } else {
                evaluation = failed(failure(of: context, result: result), leaf: leaf, chain: built)
            }
            // The context references the stacks, store and certificates until here.
            withExtendedLifetime((store, trusted, untrusted, context, presented)) {}
            return evaluation
        } catch  where error.code == .invalidArgument {
            return failed(TrustFailure(.hostnameMismatch, detail: error.debugDescription), leaf: leaf)
        } catch {
            return failed(TrustFailure(.invalidChain, detail: error.debugDescription), leaf: leaf)
        }
    }

    /// Whether `pin` is a well-formed SPKI SHA-256 pin: base64 of 32 bytes (padding optional,
    /// base64url accepted). Policies should refuse ill-formed pins when they are configured,
    /// since an ill-formed pin never matches.
    /// Reads the system trust anchors now, if not yet: a blocking read of the CA bundle (or of
    /// every file of the CA directory), for a thread that may block, at start-up, rather than
    /// in the first evaluation that needs them, on a thread that must not.
    public static func loadSystemAnchors() -> Int {
        SystemAnchors.certificates.count
    }

    public static func isValidPin(_ pin: String) -> Bool {
        decodePin(pin) != nil
    }

    // MARK: - Steps

    private static func configure(context: X509StoreContextHandle, for request: TrustEvaluationRequest, host: VerificationHost) throws(CryptoError) {
        let ctx = context.pointer
        guard let parameters = X509_STORE_CTX_get0_param(ctx) else {
            throw CryptoError(.internalFailure, "OpenSSL verification context has no parameters")
        }
        // Sets purpose and the matching trust setting (X509_TRUST_SSL_SERVER): EKU serverAuth,
        // key usage, Netscape cert type, and issuers' keyCertSign.
        guard X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER) == 1 else {
            throw CryptoError(.internalFailure, "OpenSSL does not know the TLS server purpose", detail: OpenSSLErrorQueue.drainDescription())
        }
        X509_VERIFY_PARAM_set_time(parameters, checkTime(request.evaluationTime))
        X509_VERIFY_PARAM_set_depth(parameters, Int32(Certificate.maximumChainLength))
        X509_VERIFY_PARAM_set_auth_level(parameters, 2)
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        X509_VERIFY_PARAM_set_hostflags(
            parameters,
            UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
        )
        let set: Int32 =
            switch host {
            case .dns(let name): X509_VERIFY_PARAM_set1_host(parameters, name, name.utf8.count)
            case .ip(let address): X509_VERIFY_PARAM_set1_ip_asc(parameters, address)
            }
        guard set == 1 else {
            // The host passed VerificationHost, so this is OpenSSL's parser disagreeing (an
            // IPv6 literal of the right characters but the wrong shape).
            throw CryptoError(
                .invalidArgument,
                "OpenSSL cannot parse host \"\(request.host.prefix(255))\"",
                detail: OpenSSLErrorQueue.drainDescription()
            )
        }
        if request.allowExpired {
            X509_STORE_CTX_set_verify_cb(ctx, excuseValidityPeriod)
        }
    }

    // Seconds since 1970, clamped to years 0001...9999 so that Date.distantFuture or a
    // non-finite interval cannot trap; no certificate is valid outside that range anyway.
    static func checkTime(_ date: Date) -> time_t {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return seconds < 0 ? -62_135_596_800 : 253_402_300_799 }
        return time_t(min(max(seconds, -62_135_596_800), 253_402_300_799).rounded(.down))
    }

    /// The path from the leaf to an anchor, or nothing when the path did not reach one.
    private static func builtPathToAnchor(_ context: X509StoreContextHandle) -> [Certificate] {
        let chain = X509_STORE_CTX_get0_chain(context.pointer)
        let handles = X509Stack.handles(borrowing: chain)
        // OpenSSL keeps the untrusted certificates at the bottom of the chain; anything above
        // them came from the anchors, so the path reached an anchor exactly when there is some.
        let untrustedCount = Int(X509_STORE_CTX_get_num_untrusted(context.pointer))
        guard handles.count > untrustedCount else { return [] }
        var certificates: [Certificate] = []
        for handle in handles {
            guard let certificate = try? Certificate(handle: handle) else { return [] }
            certificates.append(certificate)
        }
        return certificates
    }

    private static func checkPins(_ pins: [String], chain: [Certificate], leaf: Certificate, time: Date) -> TrustEvaluation {
        guard !pins.isEmpty else {
            return TrustEvaluation(failure: nil, verifiedChain: chain, leafSubject: leaf.subject, matchedPin: nil, evaluationTime: time)
        }
        for pin in pins {
            guard let digest = decodePin(pin) else { continue }
            if chain.contains(where: { $0.spkiSHA256 == digest }) {
                return TrustEvaluation(failure: nil, verifiedChain: chain, leafSubject: leaf.subject, matchedPin: pin, evaluationTime: time)
            }
        }
        let failure = TrustFailure(.pinMismatch, detail: "none of \(pins.count) pins matches the \(chain.count) certificates of the verified chain")
        return TrustEvaluation(failure: failure, verifiedChain: chain, leafSubject: leaf.subject, matchedPin: nil, evaluationTime: time)
    }

    private static func decodePin(_ pin: String) -> [UInt8]? {
        guard let digest = Base64.decode(pin.trimmingCharacters(in: .whitespaces).utf8), digest.count == 32 else { return nil }
        return digest
    }

    // MARK: - OpenSSL's verdict

    private static func failure(of context: X509StoreContextHandle, result: Int32) -> TrustFailure {
        let ctx = context.pointer
        let error = X509_STORE_CTX_get_error(ctx)
        let depth = Int(X509_STORE_CTX_get_error_depth(ctx))
        guard result == 0, error != X509_V_OK else {
            // A negative result is OpenSSL failing internally rather than judging the chain.
            return TrustFailure(.invalidChain, detail: "verification could not run: \(OpenSSLErrorQueue.drainDescription())")
        }
        var detail = String(cString: X509_verify_cert_error_string(Int(error)))
        if let current = X509_STORE_CTX_get_current_cert(ctx), let subject = X509_get_subject_name(current) {
            let name = (try? DistinguishedName.rfc2253(ofName: subject)) ?? "?"
            detail += " (depth \(depth): \(name))"
        } else {
            detail += " (depth \(depth))"
        }
        return TrustFailure(code(for: error), detail: detail, depth: depth)
    }

    static func code(for error: Int32) -> TrustFailure.Code {
        switch error {
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
            X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_CERT_UNTRUSTED,
            X509_V_ERR_CERT_REJECTED:
            .untrustedRoot
        case X509_V_ERR_CERT_HAS_EXPIRED:
            .expired
        case X509_V_ERR_CERT_NOT_YET_VALID:
            .notYetValid
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            .hostnameMismatch
        case X509_V_ERR_INVALID_PURPOSE, X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            .badKeyUsage
        case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD,
            X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD,
            X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY,
            X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
            X509_V_ERR_INVALID_EXTENSION:
            .malformedCertificate
        default:
            .invalidChain
        }
    }
}

/// Excuses exactly the two validity-period errors, for `allowExpired`; every other error keeps
/// OpenSSL's verdict (`ok` is 0 when OpenSSL found a problem, 1 otherwise).
private func excuseValidityPeriod(_ ok: Int32, _ context: OpaquePointer?) -> Int32 {
    guard ok == 0, let context else { return ok }
    let error = X509_STORE_CTX_get_error(context)
    if error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID {
        return 1
    }
    return ok
}
