// The models (`User`, `Identity`, `Provider`, `DeviceSession`, …) are the contract's wire types, shared with the
// server: an app that imports `Lanyard` sees them as the SDK's own.
@_exported import LanyardWire
