/// One page of a listing: `{"<name>": [...], "nextCursor": "..."}`, the cursor null on the last
/// page and passed back as `cursor` for the next.
struct ListPage<Item: Encodable>: Encodable {
    let name: String
    let items: [Item]
    let nextCursor: String?

    init<Entry>(_ name: String, _ page: (entries: [Entry], next: String?), _ item: (Entry) -> Item) {
        self.name = name
        self.items = page.entries.map(item)
        self.nextCursor = page.next
    }

    init(_ name: String, _ page: (entries: [Item], next: String?)) {
        self.init(name, page) { $0 }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONPathKey.self)
        try container.encode(items, forKey: JSONPathKey(stringValue: name))
        try container.encode(nextCursor, forKey: JSONPathKey(stringValue: "nextCursor"))
    }
}
