import CountersignCore
import Foundation
import Testing

/// An index brought up to date with a few changes (a large tenant's next state) must answer as
/// one built from all its credentials does.
@Suite("Credential index")
struct CredentialIndexTests {
    static func answers(_ index: CredentialIndex, hosts: [String]) -> [String: [UUID]] {
        Dictionary(uniqueKeysWithValues: hosts.map { ($0, index.credentials(host: $0).map(\.id).sorted { $0.uuidString < $1.uuidString }) })
    }

    @Test func anUpdatedIndexAnswersAsOneBuiltWhole() {
        let hosts = ["a.example.com", "b.example.com", "c.example.com", "new.example.com"]
        var credentials = (0..<6).map { EngineFixture.credential(account: "svc-\($0)", host: hosts[$0 % 3]) }
        let index = CredentialIndex(credentials)

        // A host changed (written as a client may: folded on the way in), one added.
        var moved = credentials[1]
        moved.attributes.host = "C.Example.COM."
        moved.label = "moved"
        let added = EngineFixture.credential(account: "svc-new", host: "new.example.com")
        let updated = index.updating([moved, added], removing: [])
        credentials[1] = moved
        credentials.append(added)
        let whole = CredentialIndex(credentials)
        #expect(Self.answers(updated, hosts: hosts) == Self.answers(whole, hosts: hosts))
        #expect(updated.credential(id: moved.id)?.label == "moved")
        #expect(updated.credentials(host: "b.example.com").allSatisfy { $0.id != moved.id })
        #expect(Set(updated.all.map(\.id)) == Set(whole.all.map(\.id)))

        // Then one removed and another changed at once.
        var relabelled = credentials[2]
        relabelled.label = "relabelled"
        let removed = credentials[0].id
        let after = updated.updating([relabelled], removing: [removed])
        credentials.removeAll { $0.id == removed }
        credentials[credentials.firstIndex { $0.id == relabelled.id }!] = relabelled
        let wholeAfter = CredentialIndex(credentials)
        #expect(Self.answers(after, hosts: hosts) == Self.answers(wholeAfter, hosts: hosts))
        #expect(after.credential(id: removed) == nil)
        #expect(after.credential(id: relabelled.id)?.label == "relabelled")
        #expect(after.credential(id: added.id) == added)
        #expect(after.all.count == credentials.count)
    }
}
