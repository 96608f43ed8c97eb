import LanyardCore
import LanyardWire

// The request bodies of `/v1/groups` are the contract's wire types (`LanyardWire/Groups.swift`), read here from the
// strictly parsed body (`BodyFields`), as `AuthRequests.swift` reads the auth bodies.

extension GroupSettingsBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(name: try fields.optionalString("name"), kind: try fields.optionalCase("kind"),
                  onOwnerDeleted: try fields.optionalCase("on_owner_deleted"),
                  membersCanInvite: try fields.optionalBool("members_can_invite"))
    }
}

extension InviteBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(role: try fields.optionalCase("role", allowed: [.admin, .member, .viewer]),
                  maxUses: try fields.optionalInteger("max_uses"), expiresIn: try fields.optionalInteger("expires_in"))
    }
}

extension MemberBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(role: try fields.optionalCase("role", allowed: [.admin, .member, .viewer]),
                  shareEmail: try fields.optionalBool("share_email"))
    }
}

extension TransferBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(userID: Identifiers.canonical(try fields.string("user_id")))
    }
}

extension PolicyBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(read: try fields.optionalCase("read", allowed: [.viewer, .member, .admin]),
                  write: try fields.optionalCase("write"))
    }
}
