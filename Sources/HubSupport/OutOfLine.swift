/// A value kept out of line, behind one pointer, and copied on write: the fields most sensors never use (a device's
/// payload format, a particulate monitor, a session) cost a struct holding them 8 bytes instead of their full size,
/// which at 100,000 sensors is the difference between tens of megabytes and less than one.
///
/// Copies share one box (a type's default can be one static box every instance starts with); the first change to one
/// makes it a box of its own, and a change to a box nobody else holds is made in place. Equal and hashed by value, so two sensors compare the same
/// whether or not they share a box.
public struct OutOfLine<Value: Sendable>: Sendable {
    /// Only ever changed through `value`'s `_modify`, after making sure nobody else holds it: what another thread
    /// holds is never written to.
    ///
    /// Inlinable, like everything here: the modules that use it then get it specialised for their value and field, so
    /// setting a field is a comparison and a store. Unspecialised, each set went through a key path at run time, 6 %
    /// of reading a 100,000-sensor registry.
    @usableFromInline final class Box: @unchecked Sendable {
        @usableFromInline var value: Value
        @usableFromInline init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box

    @inlinable public init(_ value: Value) {
        box = Box(value)
    }

    @inlinable public var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    /// Sets one field of the value, unless it holds that already: assigning a field its value again (a registry
    /// followed again sets every sensor's fields) must not give each of 100,000 values a box of its own.
    @inlinable @inline(__always) public mutating func set<Field: Equatable>(
        _ field: WritableKeyPath<Value, Field>, to newValue: Field
    ) {
        if box.value[keyPath: field] != newValue { value[keyPath: field] = newValue }
    }

    /// Whether `self` and `other` hold the same box (so their values are equal without comparing them).
    @inlinable public func isSame(as other: OutOfLine) -> Bool { box === other.box }
}

extension OutOfLine: Equatable where Value: Equatable {
    @inlinable public static func == (lhs: OutOfLine, rhs: OutOfLine) -> Bool {
        lhs.isSame(as: rhs) || lhs.value == rhs.value
    }
}

extension OutOfLine: Hashable where Value: Hashable {
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
