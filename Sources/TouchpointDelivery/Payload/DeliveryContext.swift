import Foundation
import TouchpointCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Segment's standard `context` members sent with every message besides `sessionId` and
/// `library`: `app`, `device`, `os`, `locale`, `timezone` and, when the app sets it, `screen`, so
/// destinations downstream of the collector get what they expect from a mobile SDK.
///
/// Gathered once when a dispatcher starts (``current``), never per event; each message carries the
/// same bytes. Nothing here identifies the device: no device id, no advertising id.
///
/// ```json
/// "context":{"sessionId":"…","app":{"name":"Shop","version":"2.1","build":"210","namespace":"com.example.shop"},
///   "device":{"manufacturer":"Apple","model":"iPhone15,2","type":"ios"},"os":{"name":"iOS","version":"17.4.1"},
///   "locale":"en-US","timezone":"Europe/Berlin","library":{"name":"touchpoint-swift","version":"0.1.0"}}
/// ```
public struct DeliveryContext: Sendable, Hashable {
    /// `context.app`: the app's bundle name, marketing version, build number and bundle identifier.
    public struct App: Sendable, Hashable {
        /// `CFBundleName` (or `CFBundleDisplayName`).
        public var name: String?
        /// `CFBundleShortVersionString`.
        public var version: String?
        /// `CFBundleVersion`.
        public var build: String?
        /// `CFBundleIdentifier`.
        public var namespace: String?

        /// Creates the app's description.
        public init(name: String? = nil, version: String? = nil, build: String? = nil, namespace: String? = nil) {
            self.name = name
            self.version = version
            self.build = build
            self.namespace = namespace
        }
    }

    /// `context.app`; nil leaves it out.
    public var app: App?
    /// `context.device.manufacturer`: `Apple` on Apple platforms.
    public var deviceManufacturer: String?
    /// `context.device.model`: the hardware model, e.g. `iPhone15,2` (`x86_64` or `arm64` in a
    /// simulator or on Linux).
    public var deviceModel: String?
    /// `context.device.type`: `ios`, `macos`, `tvos`, `watchos`, `visionos` or `linux`.
    public var deviceType: String?
    /// `context.os.name`: `iOS`, `macOS`, … or `Linux`.
    public var osName: String?
    /// `context.os.version`, e.g. `17.4.1`.
    public var osVersion: String?
    /// `context.locale`, a BCP 47 tag such as `en-US`.
    public var locale: String?
    /// `context.timezone`, an IANA name such as `Europe/Berlin`.
    public var timezone: String?
    /// `context.screen` in points; nil leaves it out. The SDK does not read the screen itself (that
    /// needs the main actor); an app that wants it sets it.
    public var screen: (width: Int, height: Int)? {
        get { screenSize.map { ($0[0], $0[1]) } }
        set { screenSize = newValue.map { [$0.width, $0.height] } }
    }
    private var screenSize: [Int]?

    /// Creates a context; every member left nil is not sent.
    public init(
        app: App? = nil, deviceManufacturer: String? = nil, deviceModel: String? = nil, deviceType: String? = nil,
        osName: String? = nil, osVersion: String? = nil, locale: String? = nil, timezone: String? = nil
    ) {
        self.app = app
        self.deviceManufacturer = deviceManufacturer
        self.deviceModel = deviceModel
        self.deviceType = deviceType
        self.osName = osName
        self.osVersion = osVersion
        self.locale = locale
        self.timezone = timezone
    }

    /// This process's context: the main bundle's app keys, the hardware model, the operating
    /// system and its version, the user's first preferred language and the current time zone.
    public static var current: DeliveryContext {
        let info = Bundle.main.infoDictionary ?? [:]
        func value(_ key: String) -> String? { (info[key] as? String).flatMap { $0.isEmpty ? nil : $0 } }
        let app = App(
            name: value("CFBundleDisplayName") ?? value("CFBundleName"), version: value("CFBundleShortVersionString"),
            build: value("CFBundleVersion"), namespace: value("CFBundleIdentifier"))
        let version = ProcessInfo.processInfo.operatingSystemVersion
        var osVersion = "\(version.majorVersion).\(version.minorVersion)"
        if version.patchVersion > 0 { osVersion += ".\(version.patchVersion)" }
        return DeliveryContext(
            app: app.name == nil && app.version == nil && app.namespace == nil ? nil : app,
            deviceManufacturer: platform.manufacturer, deviceModel: hardwareModel(), deviceType: platform.type,
            osName: platform.os, osVersion: osVersion,
            locale: Locale.preferredLanguages.first
                ?? Locale.current.identifier.replacingOccurrences(of: "_", with: "-"),
            timezone: TimeZone.current.identifier)
    }

    /// The operating system's name, the device type and the manufacturer, as Segment's SDKs name them.
    static var platform: (os: String, type: String, manufacturer: String?) {
        #if os(iOS)
        return ("iOS", "ios", "Apple")
        #elseif os(macOS)
        return ("macOS", "macos", "Apple")
        #elseif os(tvOS)
        return ("tvOS", "tvos", "Apple")
        #elseif os(watchOS)
        return ("watchOS", "watchos", "Apple")
        #elseif os(visionOS)
        return ("visionOS", "visionos", "Apple")
        #elseif os(Linux)
        return ("Linux", "linux", nil)
        #else
        return ("unknown", "unknown", nil)
        #endif
    }

    /// `uname`'s machine: the hardware model on Apple devices, the architecture elsewhere.
    static func hardwareModel() -> String? {
        var name = utsname()
        guard uname(&name) == 0 else { return nil }
        let machine = withUnsafeBytes(of: &name.machine) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return machine.isEmpty ? nil : machine
    }

    /// Writes `key` with an object of the given members that are set; nothing when none is.
    private static func write(_ key: String, _ members: [(String, String?)], to writer: inout JSONWriter) {
        let present = members.compactMap { name, value in value.map { (name, $0) } }
        guard !present.isEmpty else { return }
        writer.key(key)
        writer.beginObject()
        for (name, value) in present {
            writer.key(name)
            writer.string(value)
        }
        writer.endObject()
    }

    /// Writes the members after `sessionId` (each preceded by its comma) into `writer`.
    func write(to writer: inout JSONWriter) {
        if let app {
            Self.write(
                "app",
                [("name", app.name), ("version", app.version), ("build", app.build), ("namespace", app.namespace)],
                to: &writer)
        }
        Self.write(
            "device", [("manufacturer", deviceManufacturer), ("model", deviceModel), ("type", deviceType)], to: &writer)
        Self.write("os", [("name", osName), ("version", osVersion)], to: &writer)
        if let screen {
            writer.key("screen")
            writer.beginObject()
            writer.key("width")
            writer.int(screen.width)
            writer.key("height")
            writer.int(screen.height)
            writer.endObject()
        }
        if let locale {
            writer.key("locale")
            writer.string(locale)
        }
        if let timezone {
            writer.key("timezone")
            writer.string(timezone)
        }
    }
}
