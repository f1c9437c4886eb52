import CountersignCore
import Foundation
import Hummingbird

extension Parameters {
    /// A path parameter that must be a UUID; anything else is a 400 `invalid_id`, never a 404
    /// nor a 500.
    func uuid(_ name: String) throws -> UUID {
        guard let text = get(name), let id = UUID(text: text) else {
            throw CountersignError(.invalidID, "'\(name)' must be a UUID")
        }
        return id
    }
}
