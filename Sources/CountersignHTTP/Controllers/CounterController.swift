import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// The admin API for rejection counters.
struct CounterController: Sendable {
    let counters: CounterStore
    let cache: DecisionStateCache

    func addRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.get { request, context in
            let query = try QueryParameters(request, accepting: QueryParameters.paging + ["credentialId", "blocked"])
            let page = try query.page()
            let counters = try await counters.list(
                tenantID: context.tenantID,
                credentialID: try query.uuid("credentialId"),
                blocked: try query.bool("blocked"),
                limit: page.limit,
                after: page.cursor
            )
            return try JSONResponse.make(ListPage("counters", counters))
        }
        group.get(":counterId") { _, context in
            guard let counter = try await counters.get(tenantID: context.tenantID, id: try context.parameters.uuid("counterId")) else {
                throw CountersignError(.notFound, "no such counter")
            }
            return try JSONResponse.make(counter)
        }
        group.post(":counterId/reset") { _, context in
            guard let counter = try await counters.reset(tenantID: context.tenantID, id: try context.parameters.uuid("counterId"), actor: context.actor) else {
                throw CountersignError(.notFound, "no such counter")
            }
            cache.forgetTenant(context.tenantID)
            context.logger.notice("counter reset", metadata: ["counter": "\(counter.id.text)"])
            return try JSONResponse.make(counter)
        }
    }
}
