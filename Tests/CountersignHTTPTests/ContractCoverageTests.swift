import Foundation
import HTTPTypes
import Testing

/// Both directions of "the spec is true": every operation in openapi.yaml is routed (this
/// test), and every response the tests see conforms to the spec (`TestAPI.call`).
@Suite("OpenAPI contract")
struct ContractCoverageTests {
    @Test func everySpecifiedOperationIsRouted() async throws {
        try await TestService.run { api in
            for operation in TestAPI.contract.operations() {
                let path = operation.path.replacingOccurrences(
                    of: #"\{[^}]+\}"#, with: "00000000-0000-4000-8000-000000000000", options: .regularExpression
                ).replacingOccurrences(of: "versions/00000000-0000-4000-8000-000000000000", with: "versions/1")
                let reply = try await api.call(HTTPRequest.Method(operation.method.uppercased())!, path, checkContract: false)
                #expect(reply.errorCode != "route_not_found", "\(operation.method) \(operation.path) is in openapi.yaml but not routed")
            }
        }
    }

    @Test func everyOperationRefusesAQueryParameterItDoesNotDeclare() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for operation in TestAPI.contract.operations() {
                let path = operation.path.replacingOccurrences(
                    of: #"\{[^}]+\}"#, with: "00000000-0000-4000-8000-000000000000", options: .regularExpression
                ).replacingOccurrences(of: "versions/00000000-0000-4000-8000-000000000000", with: "versions/1")
                // The routes that take a query check it after the key's role.
                let key =
                    operation.path.hasPrefix("/v1/tenants") ? TestService.operatorKey
                    : operation.path.contains("/security-checks/{securityCheck}/") ? tenant.clientKey : tenant.adminKey
                let reply = try await api.call(HTTPRequest.Method(operation.method.uppercased())!, path + "?undeclared=1", key: key)
                if Self.probes.contains(operation.path) {
                    // A monitoring system's cache-busting parameter must not fail the probe.
                    #expect(reply.status == 200, "\(operation.method) \(operation.path): \(reply)")
                    continue
                }
                #expect(reply.status == 400, "\(operation.method) \(operation.path)")
                #expect(reply.errorCode == "invalid_query", "\(operation.method) \(operation.path): \(reply)")
            }
        }
    }

    static let probes: Set<String> = ["/healthz", "/readyz", "/metrics"]

    @Test func specLintsClean() throws {
        let problems = TestAPI.contract.lint()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
