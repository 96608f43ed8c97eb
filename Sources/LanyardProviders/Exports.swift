// A provider is one type for the server, the SDK and the wire (`LanyardWire.Provider`): whoever imports the
// verification of providers' tokens has it.
@_exported import struct LanyardWire.Provider
