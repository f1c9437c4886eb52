/// The policy rule that made a decision.
public struct RuleReference: Codable, Hashable, Sendable, CustomStringConvertible {
    public var id: String
    public var name: String?

    public init(id: String, name: String? = nil) {
        self.id = id
        self.name = name
    }

    public var description: String { name.map { "\(id) (\($0))" } ?? id }
}
