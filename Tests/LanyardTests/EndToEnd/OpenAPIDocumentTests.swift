import Foundation
import LanyardCore
import Testing

/// The served OpenAPI document is what teams generate their Android (or other) clients from.
@Suite struct OpenAPIDocumentTests {
    @Test func everyOperationHasAUniqueOperationIDAndADeclaredTag() async throws {
        try await TestServer.with(.sqlite) { server in
            let document = try await server.get("/openapi.json").json
            let declaredTags = Set((document["tags"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
            #expect(!declaredTags.isEmpty)
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            var operationIDs: [String] = []
            for (path, item) in paths {
                for (method, value) in item where ["get", "put", "post", "delete", "patch"].contains(method) {
                    let operation = try #require(value as? [String: Any])
                    let operationID = operation["operationId"] as? String
                    #expect(operationID?.isEmpty == false, "\(method.uppercased()) \(path) has no operationId")
                    operationIDs.append(operationID ?? "")
                    let tags = operation["tags"] as? [String] ?? []
                    #expect(!tags.isEmpty && tags.allSatisfy(declaredTags.contains), "\(method.uppercased()) \(path) tags")
                }
            }
            // The webhooks Lanyard sends are operations too (OpenAPI 3.1 `webhooks`).
            let webhooks = try #require(document["webhooks"] as? [String: [String: Any]])
            #expect(Set(webhooks.keys) == AuditEvent.webhookTypes)
            #expect(AuditEvent.webhookTypes.isSuperset(of: ["user.created", "identity.linked", "account.merged", "passkey.clone_suspected"]))
            for (name, item) in webhooks {
                let operation = try #require(item["post"] as? [String: Any], "\(name)")
                operationIDs.append(operation["operationId"] as? String ?? "")
                #expect((operation["tags"] as? [String] ?? []).allSatisfy(declaredTags.contains))
            }
            #expect(operationIDs.count >= 26)
            #expect(Set(operationIDs).count == operationIDs.count, "operationIds repeat")
        }
    }
}
