/// A parsed JSON text as one flat array of nodes in document order, over the text's bytes.
///
/// Strings and numbers stay bytes until a type asks for them, so that member names are
/// compared without building a `String` and unread values cost nothing. Every container is
/// followed by its subtree; an object's subtree is its members as name, value, name, value.
struct JSONTree {
    enum Kind: UInt8 {
        case null, `false`, `true`, number, string, array, object
    }

    struct Node {
        var kind: Kind
        /// For numbers: written without fraction or exponent.
        var isPlainInteger = false
        /// For strings and numbers: where their bytes are in `bytes` (a string's contents,
        /// without quotes or escapes).
        var start: UInt32 = 0
        /// For strings and numbers: how many bytes; for arrays and objects: how many elements or members.
        var length: UInt32 = 0
        /// The index of the first node after this one's subtree.
        var end: UInt32 = 0
    }

    /// The text as sent, followed by the contents of the strings that had escapes, unescaped.
    let bytes: [UInt8]
    /// The root is node 0.
    let nodes: [Node]

    /// The members of the object at `object`, each as the index of its name node (its value
    /// is the node after it).
    func memberNames(of object: Int) -> Children {
        Children(nodes: nodes, first: object + 1, count: Int(nodes[object].length), stride: 1)
    }

    /// The elements of the array at `array`.
    func elements(of array: Int) -> Children {
        Children(nodes: nodes, first: array + 1, count: Int(nodes[array].length), stride: 0)
    }

    /// The children of a container, stepping over each one's subtree. (A struct rather than
    /// `sequence(first:next:)`, whose stored closure would cost an allocation per container.)
    struct Children: Sequence, IteratorProtocol {
        let nodes: [Node]
        var upcoming: Int
        var remaining: Int
        /// 1 for objects, where a value follows each name node; 0 for arrays.
        let stride: Int

        init(nodes: [Node], first: Int, count: Int, stride: Int) {
            self.nodes = nodes
            upcoming = first
            remaining = count
            self.stride = stride
        }

        mutating func next() -> Int? {
            guard remaining > 0 else { return nil }
            let child = upcoming
            upcoming = Int(nodes[child + stride].end)
            remaining -= 1
            return child
        }
    }

    /// The string node at `index` as a `String`.
    func string(at index: Int) -> String {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(node.start)..<Int(node.start + node.length)]), as: UTF8.self)
        }
    }

    /// Whether the string node at `index` spells `name` (compared as UTF-8 bytes).
    func string(at index: Int, equals name: UnsafeBufferPointer<UInt8>) -> Bool {
        let node = nodes[index]
        guard Int(node.length) == name.count else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            var offset = Int(node.start)
            for byte in name {
                guard buffer[offset] == byte else { return false }
                offset += 1
            }
            return true
        }
    }

    /// The coding path of the node at `target`: the member names and array indices on the way
    /// from the root. Only errors need it, so it is found by walking down rather than carried.
    func codingPath(to target: Int) -> [any CodingKey] {
        var path: [any CodingKey] = []
        var current = 0
        while current != target, let (key, child) = step(from: current, toward: target) {
            path.append(key)
            current = child
        }
        return path
    }

    /// The child of the container at `parent` whose subtree holds `target`, with its key.
    private func step(from parent: Int, toward target: Int) -> (JSONPathKey, Int)? {
        switch nodes[parent].kind {
        case .array:
            for (position, element) in elements(of: parent).enumerated() where target < nodes[element].end {
                return (JSONPathKey(intValue: position), element)
            }
        case .object:
            for name in memberNames(of: parent) where target < nodes[name + 1].end {
                return (JSONPathKey(stringValue: string(at: name)), name + 1)
            }
        default:
            break
        }
        return nil
    }
}

/// A member name or array index in a coding path.
struct JSONPathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
