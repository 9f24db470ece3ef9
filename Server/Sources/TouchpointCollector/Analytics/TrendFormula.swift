/// Arithmetic over a trend's series, per interval: `A / B`, `(A + B) * 100`, `-A + 2.5`.
///
/// Series are named by their letters (either case), numbers are decimal; `+ - * /` with the usual
/// precedence, parentheses, and a leading minus. A division by zero, or a series without a value
/// in an interval (an average over no events), gives no value there.
public struct TrendFormula: Sendable, Hashable, CustomStringConvertible {
    indirect enum Expression: Sendable, Hashable {
        case number(Double)
        case series(String)
        case negated(Expression)
        case binary(Character, Expression, Expression)
    }

    /// The formula as written.
    public let text: String
    let expression: Expression

    /// The series letters it uses, upper case.
    public var series: Set<String> { Self.letters(in: expression) }

    public var description: String { text }

    /// Why a formula does not read: what was expected at which character (1-based).
    struct SyntaxError: Error {
        var message: String
    }

    /// Reads `text`.
    /// - Throws: ``SyntaxError`` naming what was expected where.
    init(_ text: String) throws(SyntaxError) {
        var parser = Parser(characters: Array(text))
        let expression = try parser.expression()
        parser.skipSpaces()
        if parser.position < parser.characters.count {
            throw parser.error("expected an operator or the end")
        }
        self.text = text
        self.expression = expression
    }

    /// The formula's value given each series' value (nil where a series has none).
    func evaluate(_ values: [String: Double?]) -> Double? {
        Self.evaluate(expression, values)
    }

    private static func evaluate(_ expression: Expression, _ values: [String: Double?]) -> Double? {
        switch expression {
        case .number(let number): return number
        case .series(let letter): return values[letter] ?? nil
        case .negated(let inner): return evaluate(inner, values).map { -$0 }
        case .binary(let op, let lhs, let rhs):
            guard let left = evaluate(lhs, values), let right = evaluate(rhs, values) else { return nil }
            switch op {
            case "+": return left + right
            case "-": return left - right
            case "*": return left * right
            default: return right == 0 ? nil : left / right
            }
        }
    }

    private static func letters(in expression: Expression) -> Set<String> {
        switch expression {
        case .number: return []
        case .series(let letter): return [letter]
        case .negated(let inner): return letters(in: inner)
        case .binary(_, let lhs, let rhs): return letters(in: lhs).union(letters(in: rhs))
        }
    }

    /// A recursive-descent parser over the formula's characters.
    private struct Parser {
        let characters: [Character]
        var position = 0
        var depth = 0

        func error(_ expected: String) -> SyntaxError {
            let found = position < characters.count ? "\"\(characters[position])\"" : "the end"
            return SyntaxError(message: "\(expected) at character \(position + 1), found \(found)")
        }

        mutating func skipSpaces() {
            while position < characters.count, characters[position] == " " { position += 1 }
        }

        mutating func expression() throws(SyntaxError) -> Expression {
            var result = try term()
            while true {
                skipSpaces()
                guard position < characters.count, characters[position] == "+" || characters[position] == "-" else {
                    return result
                }
                let op = characters[position]
                position += 1
                result = .binary(op, result, try term())
            }
        }

        mutating func term() throws(SyntaxError) -> Expression {
            var result = try factor()
            while true {
                skipSpaces()
                guard position < characters.count, characters[position] == "*" || characters[position] == "/" else {
                    return result
                }
                let op = characters[position]
                position += 1
                result = .binary(op, result, try factor())
            }
        }

        mutating func factor() throws(SyntaxError) -> Expression {
            skipSpaces()
            guard position < characters.count else { throw error("expected a series letter, a number or (") }
            let character = characters[position]
            if character == "-" {
                position += 1
                return .negated(try factor())
            }
            if character == "(" {
                depth += 1
                guard depth <= 32 else { throw error("parentheses nested deeper than 32") }
                position += 1
                let inner = try expression()
                skipSpaces()
                guard position < characters.count, characters[position] == ")" else { throw error("expected )") }
                position += 1
                depth -= 1
                return inner
            }
            if character.isASCII, character.isLetter {
                position += 1
                if position < characters.count, characters[position].isLetter || characters[position].isNumber {
                    position -= 1
                    throw error("expected one series letter")
                }
                return .series(character.uppercased())
            }
            var end = position
            while end < characters.count, characters[end].isASCII, characters[end].isNumber || characters[end] == "." {
                end += 1
            }
            guard end > position, let number = Double(String(characters[position..<end])) else {
                throw error("expected a series letter, a number or (")
            }
            position = end
            return .number(number)
        }
    }
}
