@testable import CountersignService
import Foundation
import Testing

@Suite struct CachedStatesTests {
    @Test func aStateReadBeforeAForgetIsNotKept() {
        var states = CachedStates<String>()
        let session = UUID()
        let readBefore = states.forgets
        // A decision was recorded meanwhile and the state it changed forgotten.
        states.forget(session)
        states.keep("read before the change", for: session, readAfter: readBefore)
        #expect(states.values[session] == nil)
        states.keep("read after it", for: session, readAfter: states.forgets)
        #expect(states.values[session] == "read after it")
    }
}
