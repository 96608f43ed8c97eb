import Foundation
import Lanyard
import Testing

/// The SDK's groups against a real server: a parent creates a family, a child joins by code on another device,
/// both edit the shopping list and see it live, the child leaves.
@Suite struct SDKGroupsTests {
    struct Item: Codable, Sendable, Equatable {
        var name: String
        var done = false
    }

    @Test func aFamilySharesAListLiveAndTheChildLeaves() async throws {
        try await TestServer.with(.sqlite, configure: SDKChangesTests.quick) { server in
            let parent = server.client(), child = server.client()
            try await parent.signInWithApple(idToken: try server.idToken(.apple, sub: "sdk-parent"))
            try await child.signInWithGoogle(idToken: try server.idToken(.google, sub: "sdk-child", email: "kid@example.com"))

            let family = try await parent.groups.create(name: "The Smiths")
            #expect(family.role == .owner && family.memberCount == 1 && family.kind == .family)
            let invite = try await parent.groups.invite(to: family.id)
            let code = try #require(invite.code)
            #expect(invite.url?.absoluteString == server.baseURL + "/join/" + code)

            let preview = try await child.groups.preview(code: code.lowercased())
            #expect(preview.groupName == "The Smiths" && preview.role == .member && preview.memberCount == 1)
            // Joined with the link itself, as scanned from a QR code.
            let joined = try await child.groups.join(code: try #require(invite.url).absoluteString)
            #expect(joined.id == family.id && joined.role == .member)
            let members = try await parent.groups.group(family.id).members ?? []
            #expect(members.map(\.role) == [.owner, .member])

            // Both see the shopping list change live.
            let childList = child.groups.collection("shopping", of: Item.self, in: family.id)
            let parentList = parent.groups.collection("shopping", of: Item.self, in: family.id)
            let childFeed = childList.changes()
            let reader = SDKChangesTests.Reader(childFeed)
            defer { reader.stop() }
            let saved = try await parentList.put(Item(name: "Milk"), id: "milk")
            #expect(saved.createdBy == parent.user?.id)
            #expect(try await reader.wait { reader.elements.map(\.id) == ["milk"] && childFeed.isLive })
            try await childList.put(Item(name: "Milk", done: true), id: "milk", ifVersion: saved.version)
            let read = try await parentList.get("milk")
            #expect(read?.value.done == true && read?.updatedBy == child.user?.id && read?.createdBy == parent.user?.id)
            #expect(try await reader.wait { reader.elements.count == 2 })
            #expect(reader.elements.last?.value?.done == true)

            // Typed errors.
            do {
                try await parent.groups.leave(family.id)
                Issue.record("the owner left")
            } catch LanyardError.ownerMustTransfer {}
            do {
                _ = try await child.groups.invite(to: family.id)
                Issue.record("a member invited")
            } catch LanyardError.insufficientRole(let required) {
                #expect(required == .admin)
            }
            do {
                _ = try await server.client().groups.preview(code: code)
                Issue.record("no session")
            } catch LanyardError.notSignedIn {}
            let stranger = server.client()
            try await stranger.signInWithGoogle(idToken: try server.idToken(.google, sub: "sdk-stranger"))
            do {
                try await stranger.groups.join(code: code)
                Issue.record("a used-up code")
            } catch LanyardError.inviteUnusable(let reason) {
                #expect(reason == "used_up")
            }
            do {
                _ = try await stranger.groups.group(family.id)
                Issue.record("a stranger read the group")
            } catch LanyardError.notFound {}

            // The child leaves: the group's live changes end, and the group is gone from its list.
            try await child.groups.leave(family.id)
            #expect(try await reader.wait { reader.finished })
            #expect(reader.error == nil)
            #expect(try await child.groups.list().isEmpty)
        }
    }

    @Test func theWholeFeedSaysWhenAGroupIsGoneAndTheModelFollowsTheAccount() async throws {
        try await TestServer.with(.sqlite, configure: SDKChangesTests.quick) { server in
            let parent = server.client(), child = server.client()
            try await parent.signInWithApple(idToken: try server.idToken(.apple, sub: "model-parent"))
            let family = try await parent.groups.create(name: "Model family")
            let code = try #require(try await parent.groups.invite(to: family.id).code)

            let model = await LanyardGroupsModel(client: child)
            try await child.signInWithGoogle(idToken: try server.idToken(.google, sub: "model-child"))
            let feed = SDKChangesTests.Reader(child.changes())
            defer { feed.stop() }
            try await SDKObservationTests.waitUntil { model.lastError == nil }
            _ = try await model.join(code: code)
            #expect(await model.groups.map(\.id) == [family.id])
            try await parent.groups.collection("notes", of: Item.self, in: family.id).put(Item(name: "hello"), id: "n1")
            #expect(try await feed.wait { feed.elements.contains { $0.groupID == family.id && $0.id == "n1" } })

            try await parent.groups.remove(try #require(child.user?.id), from: family.id)
            #expect(try await feed.wait { feed.elements.last?.kind == .groupRemoved })
            #expect(feed.elements.last?.groupID == family.id)
            await model.refresh()
            #expect(await model.groups.isEmpty)
            // Signing out empties a list that was not empty.
            let own = try await model.create(name: "The child's own")
            #expect(await model.groups.map(\.id) == [own.id])
            try await child.signOut()
            try await SDKObservationTests.waitUntil { model.groups.isEmpty }
        }
    }
}
