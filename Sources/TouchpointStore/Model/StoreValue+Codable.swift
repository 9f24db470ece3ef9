import TouchpointCore

extension StoreValue: Codable {
    /// Decodes the tagged JSON form described in ``jsonValue`` (plain JSON decodes as itself).
    public init(from decoder: any Decoder) throws {
        self.init(json: try JSONValue(from: decoder))
    }

    /// Encodes the tagged JSON form, with whole doubles tagged too (`{"$number":1.0}`), because
    /// Foundation's `JSONDecoder` reads `1.0` back as an integer.
    public func encode(to encoder: any Encoder) throws {
        try tagged(integralNumbers: true).encode(to: encoder)
    }
}
