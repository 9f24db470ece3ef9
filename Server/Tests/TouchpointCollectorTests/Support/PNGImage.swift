import TouchpointCore
import TouchpointTesting

/// A decoded PNG (8-bit RGB or RGBA, not interlaced: what Chromium writes), for checking
/// screenshots pixel by pixel.
struct PNGImage {
    let width: Int
    let height: Int
    /// Pixels as RGBA, row by row.
    let rgba: [UInt8]

    init(_ bytes: [UInt8]) throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count > 33, Array(bytes[0..<8]) == signature else { throw TestFailure("not a PNG") }
        func integer(_ offset: Int) -> Int {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        var offset = 8
        var header: (width: Int, height: Int, depth: UInt8, color: UInt8, interlace: UInt8)?
        var compressed: [UInt8] = []
        while offset + 8 <= bytes.count {
            let length = integer(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let data = offset + 8
            guard data + length + 4 <= bytes.count else { throw TestFailure("PNG chunk \(type) is cut off") }
            if type == "IHDR" {
                header = (integer(data), integer(data + 4), bytes[data + 8], bytes[data + 9], bytes[data + 12])
            } else if type == "IDAT" {
                compressed += bytes[data..<data + length]
            }
            offset = data + length + 4
        }
        guard let header, header.depth == 8, header.color == 2 || header.color == 6, header.interlace == 0 else {
            throw TestFailure("unsupported PNG: \(String(describing: header))")
        }
        let channels = header.color == 6 ? 4 : 3
        let raw = try Gzip.decompress(compressed, maximumSize: 256 << 20)
        let stride = header.width * channels
        guard raw.count == header.height * (stride + 1) else { throw TestFailure("PNG data has the wrong size") }
        var pixels = [UInt8](repeating: 0, count: header.height * stride)
        for row in 0..<header.height {
            let filter = raw[row * (stride + 1)]
            let source = row * (stride + 1) + 1
            let target = row * stride
            for column in 0..<stride {
                let left = column >= channels ? Int(pixels[target + column - channels]) : 0
                let up = row > 0 ? Int(pixels[target - stride + column]) : 0
                let upLeft = row > 0 && column >= channels ? Int(pixels[target - stride + column - channels]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (a, b, c) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predictor = a <= b && a <= c ? left : (b <= c ? up : upLeft)
                default: throw TestFailure("PNG filter \(filter) is unknown")
                }
                pixels[target + column] = UInt8((Int(raw[source + column]) + predictor) & 0xFF)
            }
        }
        width = header.width
        height = header.height
        if channels == 4 {
            rgba = pixels
        } else {
            var expanded: [UInt8] = []
            expanded.reserveCapacity(width * height * 4)
            for index in Swift.stride(from: 0, to: pixels.count, by: 3) {
                expanded += [pixels[index], pixels[index + 1], pixels[index + 2], 255]
            }
            rgba = expanded
        }
    }

    /// The share of pixels whose colour differs from the top-left pixel's (the page background).
    var inkedFraction: Double {
        let background = Array(rgba[0..<4])
        var inked = 0
        for index in Swift.stride(from: 0, to: rgba.count, by: 4) where Array(rgba[index..<index + 4]) != background {
            inked += 1
        }
        return Double(inked) / Double(width * height)
    }

    /// How many distinct colours the image has (counted up to `limit`).
    func distinctColors(limit: Int = 1000) -> Int {
        var seen = Set<UInt32>()
        for index in Swift.stride(from: 0, to: rgba.count, by: 4) {
            seen.insert(
                UInt32(rgba[index]) << 24 | UInt32(rgba[index + 1]) << 16 | UInt32(rgba[index + 2]) << 8
                    | UInt32(rgba[index + 3]))
            if seen.count >= limit { break }
        }
        return seen.count
    }
}
