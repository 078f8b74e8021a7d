//! [`PyValue`]: what `json.loads` returns, and how Python looks at it.

use std::cmp::Ordering;
use std::fmt::Write as _;

use super::str::PyStr;

/// A value as Python's `json.loads` builds it. `==` here is structural
/// (NaN is unequal to itself, `1` differs from `1.0`); Python's `==` is
/// [`PyValue::py_eq`].
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// `null`: Python's `None`.
    None,
    /// `true` / `false`.
    Bool(bool),
    /// Exact, any size (up to Python's 4300 digits).
    Int(PyInt),
    /// A float, including `NaN` and the infinities.
    Float(f64),
    /// A string, lone surrogates kept.
    Str(PyStr),
    /// An array.
    List(Vec<PyValue>),
    /// An object (see [`PyDict`]).
    Dict(PyDict),
}

/// An exact integer: inline when it fits an `i64` (almost always), else
/// its canonical decimal digits. The form is canonical, so derived `==` is
/// integer equality.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PyInt(IntRepr);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum IntRepr {
    Small(i64),
    /// Outside `i64`: a sign and the digits, no leading zero.
    Big {
        negative: bool,
        digits: Box<str>,
    },
}

impl PyInt {
    /// From a sign and ASCII digits (leading zeros allowed).
    pub fn from_parts(negative: bool, digits: &str) -> PyInt {
        debug_assert!(!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
        let trimmed = digits.trim_start_matches('0');
        let digits = if trimmed.is_empty() { "0" } else { trimmed };
        if digits.len() <= 19 {
            let magnitude = i128::from(digits.parse::<u64>().expect("at most 19 digits"));
            let signed = if negative { -magnitude } else { magnitude };
            if let Ok(small) = i64::try_from(signed) {
                return PyInt(IntRepr::Small(small));
            }
        }
        PyInt(IntRepr::Big {
            negative,
            digits: digits.into(),
        })
    }

    /// `== 0`.
    pub fn is_zero(&self) -> bool {
        self.0 == IntRepr::Small(0)
    }

    /// `< 0`.
    pub fn is_negative(&self) -> bool {
        match &self.0 {
            IntRepr::Small(i) => *i < 0,
            IntRepr::Big { negative, .. } => *negative,
        }
    }

    /// The value, when it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self.0 {
            IntRepr::Small(i) => Some(i),
            IntRepr::Big { .. } => None,
        }
    }

    /// Exact comparison with a float, as Python's `int == float`.
    fn eq_float(&self, f: f64) -> bool {
        if !f.is_finite() || f.fract() != 0.0 {
            return false;
        }
        match &self.0 {
            // -2^63 <= f < 2^63: the cast is exact.
            IntRepr::Small(i) => {
                let two_63 = 2f64.powi(63);
                (-two_63..two_63).contains(&f) && f as i64 == *i
            }
            IntRepr::Big { negative, digits } => {
                // `{:.0}` prints an integral float's exact decimal value.
                let exact = format!("{:.0}", f.abs());
                *negative == (f < 0.0) && **digits == *exact
            }
        }
    }
}

impl std::fmt::Display for PyInt {
    /// Python's `str(int)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            IntRepr::Small(i) => write!(f, "{i}"),
            IntRepr::Big { negative, digits } => {
                if *negative {
                    f.write_str("-")?;
                }
                f.write_str(digits)
            }
        }
    }
}

/// A Python `dict` from `json.loads`: insertion order, string keys, a
/// repeated key keeps its first position and takes its last value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PyDict {
    pub(super) entries: Vec<(PyStr, PyValue)>,
}

impl PyDict {
    /// `d.get(key)`.
    pub fn get(&self, key: &PyStr) -> Option<&PyValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Entries in Python's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = (&PyStr, &PyValue)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl PyValue {
    /// `value.get(key)` when the value is a dict; `None` for a missing key
    /// or a value that is not a dict.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(d) => d.get(&PyStr::from_str(key)),
            _ => None,
        }
    }

    /// Python's `type(value).__name__`: `NoneType`, `bool`, `int`, `float`,
    /// `str`, `list`, `dict` (for messages such as "force_restart is a str").
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Dict(_) => "dict",
        }
    }

    /// Python's `bool(value)`: NaN is true, `-0.0` is false.
    pub fn truthy(&self) -> bool {
        match self {
            PyValue::None => false,
            PyValue::Bool(b) => *b,
            PyValue::Int(i) => !i.is_zero(),
            PyValue::Float(f) => *f != 0.0,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::List(l) => !l.is_empty(),
            PyValue::Dict(d) => !d.is_empty(),
        }
    }

    /// Python's `str(value)`.
    pub fn py_str(&self) -> PyStr {
        match self {
            PyValue::Str(s) => s.clone(),
            other => PyStr::from_str(&other.repr()),
        }
    }

    /// Python's `repr(value)` (containers show their items this way).
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(true) => out.push_str("True"),
            PyValue::Bool(false) => out.push_str("False"),
            PyValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            PyValue::Float(f) => out.push_str(&float_repr(*f)),
            PyValue::Str(s) => out.push_str(&s.repr()),
            // Depth is bounded by the parser's MAX_DEPTH, and Python's own
            // repr recursion succeeds wherever its parse did.
            PyValue::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_repr(out);
                }
                out.push(']');
            }
            PyValue::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&k.repr());
                    out.push_str(": ");
                    v.write_repr(out);
                }
                out.push('}');
            }
        }
    }

    /// Python's `a == b` on two values from `json.loads`: `1 == 1.0 == True`,
    /// `0 == -0.0 == False`, dicts equal whatever their order, and NaN is
    /// unequal to itself at the top level. Inside containers Python compares
    /// items by identity first, and every `NaN` that `json.loads` produces
    /// is the same object (`json.decoder.NaN`), so `[NaN] == [NaN]`.
    pub fn py_eq(&self, other: &PyValue) -> bool {
        self.eq_at(other, false)
    }

    fn eq_at(&self, other: &PyValue, nested: bool) -> bool {
        use PyValue as V;
        match (self, other) {
            (V::Float(a), V::Float(b)) if a.is_nan() && b.is_nan() => nested,
            (V::None, V::None) => true,
            (V::Str(a), V::Str(b)) => a == b,
            (V::List(a), V::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_at(y, true))
            }
            (V::Dict(a), V::Dict(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).is_some_and(|w| v.eq_at(w, true)))
            }
            (a, b) => match (a.as_number(), b.as_number()) {
                (Some(x), Some(y)) => x.py_eq(&y),
                _ => false,
            },
        }
    }

    fn as_number(&self) -> Option<Number> {
        match self {
            PyValue::Bool(b) => Some(Number::Int(PyInt::from_parts(
                false,
                if *b { "1" } else { "0" },
            ))),
            PyValue::Int(i) => Some(Number::Int(i.clone())),
            PyValue::Float(f) => Some(Number::Float(*f)),
            _ => None,
        }
    }
}

enum Number {
    Int(PyInt),
    Float(f64),
}

impl Number {
    fn py_eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a == b,
            (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => {
                i.eq_float(*f)
            }
        }
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, fixed
/// notation when the decimal exponent is in -4..16 (with `.0` when
/// integral), else `1e+16` / `1.5e-05` style; `inf`, `-inf`, `nan`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let (digits, exp) = shortest_digits(f.abs());
    // Python's decpt: value = 0.DIGITS * 10^decpt.
    let decpt = exp + 1;
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let n = digits.len() as i32;
    let body = if -4 < decpt && decpt <= 16 {
        match decpt.cmp(&0) {
            Ordering::Less | Ordering::Equal => {
                format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
            }
            Ordering::Greater if decpt >= n => {
                format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
            }
            Ordering::Greater => {
                let (int, frac) = digits.split_at(decpt as usize);
                format!("{int}.{frac}")
            }
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let e = decpt - 1;
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!(
            "{first}{dot}e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    };
    format!("{sign}{body}")
}

/// The shortest digits that read back as `f` (finite, non-negative) and
/// the decimal exponent of the first one, as Python's repr picks them.
///
/// Rust's `{:e}` gives shortest round-trip digits too, nearest to the exact
/// value, but breaks an exact tie upwards, where Python's dtoa rounds half
/// to even: 72656021730249.125 is `72656021730249.12` for Python and
/// `72656021730249.13` for Rust.
fn shortest_digits(f: f64) -> (String, i32) {
    let (mut digits, exp) = split_sci(&format!("{f:e}"));
    let last = digits.as_bytes()[digits.len() - 1];
    if last % 2 == 1 {
        // A tie: the exact value is the shorter digits minus one unit in
        // the last place, followed by a single 5. A cheap look at one more
        // digit rules almost every case out; then 1100 places are exact (an
        // f64 has at most 767 significant decimal digits).
        let mut below = digits.clone();
        below.pop();
        below.push((last - 1) as char);
        let (one_more, _) = split_sci(&format!("{f:.prec$e}", prec = digits.len()));
        if !(one_more.len() == digits.len() + 1
            && one_more.starts_with(&below)
            && one_more.ends_with('5'))
        {
            return (digits, exp);
        }
        let (exact, exact_exp) = split_sci(&format!("{f:.1100e}"));
        let exact = exact.trim_end_matches('0');
        if exact_exp == exp
            && exact.len() == digits.len() + 1
            && exact.starts_with(&below)
            && exact.ends_with('5')
        {
            let candidate = format!("{}.{}e{}", &below[..1], &below[1..], exp);
            if candidate.parse::<f64>() == Ok(f) {
                digits = below;
            }
        }
    }
    (digits, exp)
}

/// `d.ddde±x` → (`dddd` without trailing zeros, keeping one, `x`).
fn split_sci(sci: &str) -> (String, i32) {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    (digits, exp.parse().expect("{:e} exponent is an integer"))
}
