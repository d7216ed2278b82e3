import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, as the name subscript gives it (repeated fields joined
    /// with ", "; not for `Cookie`, which the subscript joins with "; ").
    ///
    /// The subscript joins through generic code that is not specialized, and looks its types up at
    /// run time on every call: about 1% of a node's processor time on 1-change pushes, where each
    /// request reads four headers this way.
    func value(of name: HTTPField.Name) -> String? {
        var value: String?
        for field in self where field.name == name {
            value = value.map { $0 + ", " + field.value } ?? field.value
        }
        return value
    }
}
