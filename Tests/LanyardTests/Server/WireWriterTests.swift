import Foundation
import LanyardCore
import LanyardSupport
import LanyardWire
import Testing
@testable import LanyardServer

/// The hot answers are written by hand (`JSONWriter`), fed by the wire types: each writer must write exactly what
/// the type's `Codable` form does, and what it writes must decode back to the value the server built.
@Suite struct WireWriterTests {
    // Whole milliseconds, exactly representable: what the server's clock hands out.
    static let now = Date(timeIntervalSince1970: 1_795_000_000.125)

    static let users: [User] = [
        User(id: "01a214b7-1159-7601-bfeb-2e31bc00620f", createdAt: now, isAnonymous: false,
             displayName: "Ada \"Countess\" Lovelace \\ ✓ \u{1F600}\n", email: "x1@privaterelay.appleid.com",
             identities: [
                Identity(provider: .apple, email: "x1@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true,
                         linkedAt: now, lastSignInAt: now.addingTimeInterval(61.5)),
                Identity(provider: .google, email: nil, linkedAt: now.addingTimeInterval(0.001), lastSignInAt: nil),
             ]),
        User(id: "guest", createdAt: now, isAnonymous: true),
    ]

    static func encoded(_ value: some Encodable) throws -> JSONValue {
        try JSONParser.parse(Array(try WireCoding.encoder().encode(value)))
    }

    @Test(arguments: users)
    func aSessionAnswerWritesWhatItsCodableFormDoes(user: User) throws {
        for mergedFrom in [nil, "01a214b7-0000-7000-8000-000000000001"] {
            let answer = SessionResponse(accessToken: "eyJ.eyJ.sig", expiresIn: 900, refreshToken: "rt_AAAA",
                                         user: user, isNewUser: mergedFrom == nil, mergedFrom: mergedFrom.map { User.ID($0) })
            let written = JSONWriter.write(answer)
            #expect(try JSONParser.parse(written) == Self.encoded(answer))
            #expect(try WireCoding.decoder().decode(SessionResponse.self, from: Data(written)) == answer)
        }
    }

    @Test(arguments: users)
    func theAccountWritesWhatItsCodableFormDoesWithItsProvidersBeside(user: User) throws {
        let written = JSONWriter.write(AccountResponse(user: user))
        #expect(try WireCoding.decoder().decode(User.self, from: Data(written)) == user)
        guard case .object(var members) = try JSONParser.parse(written) else { throw WireWriterError() }
        #expect(members.removeValue(forKey: "linked_providers") == .array(user.identities.map { .string($0.provider.rawValue) }))
        #expect(members.removeValue(forKey: "recovery") == .object(["methods": .number(Double(user.identities.count))]))
        #expect(members.removeValue(forKey: "legacy_id") == .null && members.removeValue(forKey: "legacy_source") == .null)
        #expect(JSONValue.object(members) == (try Self.encoded(user)))
        #expect(try JSONParser.parse(written) == Self.encoded(AccountResponse(user: user)))
        #expect(try WireCoding.decoder().decode(AccountResponse.self, from: Data(written)) == AccountResponse(user: user))
        let migrated = AccountResponse(user: user, legacyID: "Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY", legacySource: "firebase")
        #expect(try JSONParser.parse(JSONWriter.write(migrated)) == Self.encoded(migrated))
        #expect(try WireCoding.decoder().decode(AccountResponse.self, from: Data(JSONWriter.write(migrated))) == migrated)
    }

    @Test func linkAnswersWriteWhatTheirCodableFormDoes() throws {
        let linked = LinkResponse(linkedProviders: [.apple, .google], message: "Google account linked", user: Self.users[0])
        let unlinked = LinkResponse(linkedProviders: [.google], message: "Apple account unlinked")
        for answer in [linked, unlinked] {
            let written = JSONWriter.write(answer)
            #expect(try JSONParser.parse(written) == Self.encoded(answer))
            #expect(try WireCoding.decoder().decode(LinkResponse.self, from: Data(written)) == answer)
        }
    }

    /// The answers `JSONEncoder` writes (the session list) use the server's encoder and decode back too.
    @Test func theSessionListDecodesBackToWhatTheServerBuilt() throws {
        let list = SessionList(sessions: [
            DeviceSession(id: "s1", createdAt: Self.now, lastRefreshedAt: Self.now, expiresAt: Self.now.addingTimeInterval(86_400),
                          authTime: Self.now, method: "apple", clientIP: "198.51.100.7", userAgent: "Lanyard/1 (iOS)", isCurrent: true),
            DeviceSession(id: "s2", createdAt: Self.now, lastRefreshedAt: Self.now, expiresAt: Self.now,
                          authTime: Self.now, method: "anonymous", isCurrent: false),
        ])
        let written = try JSONResponse.encoder.encode(list)
        #expect(try WireCoding.decoder().decode(SessionList.self, from: written) == list)
        #expect(try JSONParser.parse(Array(written)) == Self.encoded(list))
    }

    static let records: [DataRecord<JSONText>] = [
        DataRecord(id: "r1", collection: "notes", version: 3, updatedAt: now,
                   data: JSONText(#"{"text":"Ada \"Countess\" ✓","n":[1,2.5,true,null],"deep":{"a":{"b":"c"}}}"#)),
        DataRecord(id: "gone", collection: "notes", version: 4, updatedAt: now, deleted: true, data: nil),
        DataRecord(id: "milk", collection: "shopping", version: 1, updatedAt: now, data: JSONText(#"{"qty":2}"#),
                   groupID: "g1", createdBy: "u1", updatedBy: "u2"),
    ]

    /// Records, their pages, the feed's changes and its pages: written by hand, as their `Codable` forms are.
    @Test func recordsAndChangesWriteWhatTheirCodableFormsDo() throws {
        for record in Self.records {
            #expect(try JSONParser.parse(JSONWriter.write(record)) == Self.encoded(record))
        }
        for cursor in ["42", nil] {
            let page = DataChanges(records: Self.records, nextCursor: cursor, hasMore: cursor != nil)
            #expect(try JSONParser.parse(JSONWriter.write(page)) == Self.encoded(page))
        }
        let changes: [ChangeRecord<JSONText>] = [
            ChangeRecord(collection: "notes", id: "r1", version: 3, updatedAt: Self.now, deleted: false,
                         data: JSONText(#"{"a":1}"#)),
            ChangeRecord(collection: "shopping", id: "milk", version: 1, updatedAt: Self.now, deleted: false,
                         data: JSONText("{}"), groupID: "g1", createdBy: "u1", updatedBy: "u1"),
            ChangeRecord(collection: "places", id: "home", version: 2, updatedAt: Self.now, deleted: true, data: nil,
                         groupID: "g1", sharedBy: "u3"),
        ]
        for change in changes {
            let written = JSONWriter.write(change)
            #expect(try JSONParser.parse(written) == Self.encoded(change))
            let decoded = try WireCoding.decoder().decode(ChangeRecord<JSONText>.self, from: Data(written))
            #expect(decoded.id == change.id && decoded.groupID == change.groupID && decoded.sharedBy == change.sharedBy)
            #expect(try decoded.data.map { try JSONParser.parse(Array($0.text.utf8)) }
                    == change.data.map { try JSONParser.parse(Array($0.text.utf8)) })
        }
        let page = ChangeFeedPage(changes: changes, nextCursor: "7~g.g1.2", hasMore: false, removedGroups: ["g9"])
        #expect(try JSONParser.parse(JSONWriter.write(page)) == Self.encoded(page))
    }
}

struct WireWriterError: Error {}
