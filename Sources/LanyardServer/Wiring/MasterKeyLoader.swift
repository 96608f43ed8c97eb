import Foundation
import LanyardSupport

/// `LANYARD_MASTER_KEY`, or (SQLite only) a key generated once into the data directory with mode 0600.
enum MasterKeyLoader {
    static func load(_ configuration: LanyardConfiguration, random: any RandomSource) throws -> MasterKey {
        if let configured = configuration.masterKey {
            do {
                return try MasterKey(base64: configured)
            } catch {
                throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: "\(error)")
            }
        }
        let path = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("master.key").path
        if let data = FileManager.default.contents(atPath: path) {
            do {
                return try MasterKey(base64: String(decoding: data, as: UTF8.self))
            } catch {
                throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: "\(path) \(error)")
            }
        }
        do {
            try SecretFile.createDirectory(atPath: configuration.dataDirectory)
        } catch {
            throw ConfigurationError(variable: "LANYARD_DATA_DIR", problem: "cannot create \(configuration.dataDirectory)")
        }
        let encoded = Data(random.bytes(32)).base64EncodedString() + "\n"
        do {
            try SecretFile.writeOnce(Data(encoded.utf8), to: path)
        } catch {
            throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: "cannot write a generated key to \(path)")
        }
        // Whoever created the file first, its key is the one.
        return try load(configuration, random: random)
    }
}
