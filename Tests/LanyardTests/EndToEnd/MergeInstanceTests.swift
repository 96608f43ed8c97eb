import Foundation
import LanyardEmulator
import Testing

/// Merges against `lanyard serve` processes: killed in the middle (all or nothing), and raced across two instances
/// on one PostgreSQL (reference section 15).
@Suite struct MergeInstanceTests {
    /// A challenge of `session` on `server`, and a Google token of `sub` carrying its nonce.
    static func proof(_ server: ServerProcess, _ session: Session, provider: EmulatedProvider = .google,
                      sub: String) async throws -> [String: Any] {
        let challenge = try await server.request(.POST, "/v1/users/me/merge/challenge", bearer: session.accessToken)
        let nonce = try #require(challenge.json["nonce"] as? String, "\(challenge.text)")
        return ["provider": provider.rawValue,
                "id_token": try ServerProcess.minter.mint(provider, MintRequest(sub: sub, nonce: nonce))]
    }

    static func google(_ server: ServerProcess, _ sub: String) async throws -> Session {
        try Session(try await server.request(.POST, "/v1/auth/signin/google",
                                             json: ["id_token": try ServerProcess.minter.mint(.google, MintRequest(sub: sub))]))
    }

    /// `kill -9` at two known points of a merge of 600 records, held there by `LANYARD_TEST_PAUSE_AT` (the server
    /// says when it got there): inside the transaction with every write sent, the restarted server shows no merge at
    /// all; just after the commit, the whole merge.
    @Test(arguments: TestDatabase.available)
    func aMergeKilledInTheMiddleHappensWholeOrNotAtAll(database: TestDatabase) async throws {
        let (url, cleanup) = try await database.makeFresh()
        defer { Task { await cleanup() } }
        let count = 600
        for point in ["merge.before_commit", "merge.after_commit"] {
            let server = try await ServerProcess.start(databaseURL: url, environment: ["LANYARD_TEST_PAUSE_AT": point])
            let kept = try Session(try await server.signIn(apple: "killed-kept-\(point)"))
            let absorbed = try await Self.google(server, "killed-absorbed-\(point)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask { [server] in
                        for n in stride(from: worker, to: count, by: 8) {
                            let answer = try await server.request(.PUT, "/v1/data/items/i\(n)", json: ["data": ["n": n]],
                                                                  bearer: absorbed.accessToken)
                            guard answer.status == 200 else { throw TestSetupError("write failed: \(answer.text)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let proof = try await Self.proof(server, kept, sub: "killed-absorbed-\(point)")
            let merging = Task { [server] in
                try? await server.request(.POST, "/v1/users/me/merge", json: ["proof": proof], bearer: kept.accessToken)
            }
            #expect(try await server.waitForLog("paused at \(point)"), "the merge never reached \(point)")
            await server.kill()
            #expect(await merging.value?.status == nil, "the merge was answered although the server was killed")

            let restarted = try await ServerProcess.start(databaseURL: url)
            defer { restarted.stop() }
            let again = try Session(try await restarted.signIn(apple: "killed-kept-\(point)"))
            let keptItems = try await Self.itemCount(restarted, again)
            let googleOwner = try await Self.google(restarted, "killed-absorbed-\(point)")
            if point == "merge.before_commit" {
                #expect(googleOwner.userID == absorbed.userID, "killed before its commit, yet merged")
                #expect(keptItems == 0, "not merged, but the survivor has \(keptItems) records")
                #expect(try await Self.itemCount(restarted, googleOwner) == count)
            } else {
                #expect(googleOwner.userID == kept.userID, "killed after its commit, yet not merged")
                #expect(keptItems == count, "merged, but the survivor has \(keptItems) of \(count) records")
            }
        }
    }

    /// How many live records the account has in `items`.
    static func itemCount(_ server: ServerProcess, _ session: Session) async throws -> Int {
        var cursor = "0", total = 0
        while true {
            let page = try await server.request(.GET, "/v1/data/items?since=\(cursor)&limit=500", bearer: session.accessToken)
            let records = page.json["records"] as? [[String: Any]] ?? []
            total += records.filter { $0["deleted"] as? Bool != true }.count
            cursor = page.json["next_cursor"] as? String ?? cursor
            if page.json["has_more"] as? Bool != true { return total }
        }
    }

    @Test(.requiresPostgres) func mergesIntoEachOtherThroughTwoInstancesEndInOne() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        defer { Task { await cleanup() } }
        let one = try await ServerProcess.start(databaseURL: url)
        defer { one.stop() }
        let two = try await ServerProcess.start(databaseURL: url)
        defer { two.stop() }
        for round in 0..<8 {
            let a = try Session(try await one.signIn(apple: "cross-a-\(round)"))
            let b = try await Self.google(two, "cross-b-\(round)")
            let proofOfB = try await Self.proof(one, a, sub: "cross-b-\(round)")
            let proofOfA = try await Self.proof(two, b, provider: .apple, sub: "cross-a-\(round)")
            async let intoA = one.request(.POST, "/v1/users/me/merge", json: ["proof": proofOfB], bearer: a.accessToken)
            async let intoB = two.request(.POST, "/v1/users/me/merge", json: ["proof": proofOfA], bearer: b.accessToken)
            let answers = try await [intoA, intoB]
            #expect(answers.filter { $0.status == 200 }.count == 1, "\(answers.map(\.text))")
            let survivor = try #require(answers.first { $0.status == 200 }?.json["into"] as? String)
            #expect(try Session(try await two.signIn(apple: "cross-a-\(round)")).userID == survivor)
            #expect(try await Self.google(one, "cross-b-\(round)").userID == survivor)
        }
    }
}
