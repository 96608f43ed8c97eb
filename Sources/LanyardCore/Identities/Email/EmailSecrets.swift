import Crypto
import Foundation
import LanyardSupport

/// What makes an email flow's secrets safe at rest: codes, link tokens and device secrets are kept only as
/// HMAC-SHA-256 under a key derived from the master key (a stolen database cannot replay them), and a queued mail
/// is sealed with AES-GCM until it is sent.
struct EmailSecrets: Sendable {
    private let hashKey: SymmetricKey
    private let masterKey: MasterKey

    init(masterKey: MasterKey) {
        self.masterKey = masterKey
        self.hashKey = SymmetricKey(data: masterKey.derivedKey(purpose: "lanyard email flow v1"))
    }

    /// The keyed hash of `value` for one purpose (`code:FLOW`, `link`, `secret`), as hex.
    func hash(_ purpose: String, _ value: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data((purpose + "\n" + value).utf8), using: hashKey)).hexString
    }

    func codeHash(flowID: String, code: String) -> String { hash("code:" + flowID, code) }
    func linkHash(_ token: String) -> String { hash("link", token) }
    func secretHash(_ secret: String) -> String { hash("secret", secret) }

    /// Whether `presented` hashes to `stored`, compared in constant time.
    static func matches(_ presented: String, _ stored: String) -> Bool {
        let a = Array(presented.utf8), b = Array(stored.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    func seal(_ content: MailContent) throws -> [UInt8] {
        try masterKey.seal(try JSONEncoder().encode(content))
    }

    func open(_ sealed: [UInt8]) throws -> MailContent {
        try JSONDecoder().decode(MailContent.self, from: Data(try masterKey.open(sealed)))
    }
}

/// One mail's content while it waits in the outbox.
struct MailContent: Codable, Sendable {
    var subject: String
    var text: String
    var html: String
    var code: String
    var link: String?
    var messageID: String
}
