//! Number parsing shared by the trace readers, with messages that say what
//! is wrong with a token (the caller adds the file, line and field).

/// 2^64 as a float: the first value that does not fit a `u64`.
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// A non-negative integer in plain digits.
pub(crate) fn uint(tok: &str) -> Result<u64, String> {
    if let Ok(v) = tok.parse::<u64>() {
        return Ok(v);
    }
    Err(match tok.parse::<f64>() {
        Err(_) => format!("{tok:?} is not a number"),
        Ok(x) if !x.is_finite() => format!("{tok:?} is not a finite number"),
        Ok(_) if tok.trim_start().starts_with('-') => format!("{tok:?} is negative"),
        Ok(x) if x >= U64_LIMIT => format!("{tok:?} is too large"),
        Ok(_) => format!("{tok:?} is not an integer"),
    })
}

/// A non-negative integer that fits a `u32`.
pub(crate) fn uint32(tok: &str) -> Result<u32, String> {
    let v = uint(tok)?;
    u32::try_from(v).map_err(|_| format!("{v} is too large (at most {})", u32::MAX))
}

/// A non-negative, finite real number (`-0` reads as 0).
pub(crate) fn nonneg_real(tok: &str) -> Result<f64, String> {
    match tok.parse::<f64>() {
        Err(_) => Err(format!("{tok:?} is not a number")),
        Ok(x) if !x.is_finite() => Err(format!("{tok:?} is not a finite number")),
        Ok(x) if x < 0.0 => Err(format!("{tok:?} is negative")),
        Ok(x) => Ok(x.max(0.0)),
    }
}

/// `round(x * scale)` as a `u64`, or an error if it does not fit.
pub(crate) fn scaled(tok: &str, x: f64, scale: f64) -> Result<u64, String> {
    let v = (x * scale).round();
    if v < U64_LIMIT {
        Ok(v as u64)
    } else {
        Err(format!("{tok:?} is too large"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_is_wrong() {
        assert_eq!(uint("12"), Ok(12));
        assert_eq!(uint("x").unwrap_err(), "\"x\" is not a number");
        assert_eq!(uint("-3").unwrap_err(), "\"-3\" is negative");
        assert_eq!(uint("-0").unwrap_err(), "\"-0\" is negative");
        assert_eq!(uint("1.5").unwrap_err(), "\"1.5\" is not an integer");
        assert_eq!(uint("NaN").unwrap_err(), "\"NaN\" is not a finite number");
        assert_eq!(
            uint("99999999999999999999").unwrap_err(),
            "\"99999999999999999999\" is too large"
        );
        assert_eq!(
            uint32("4294967296").unwrap_err(),
            "4294967296 is too large (at most 4294967295)"
        );
        assert_eq!(nonneg_real("-0.0"), Ok(0.0));
        assert_eq!(
            nonneg_real("inf").unwrap_err(),
            "\"inf\" is not a finite number"
        );
        assert_eq!(nonneg_real("-1").unwrap_err(), "\"-1\" is negative");
        assert_eq!(
            scaled("1e300", 1e300, 1e6).unwrap_err(),
            "\"1e300\" is too large"
        );
        assert_eq!(scaled("0.5", 0.5, (1u64 << 20) as f64), Ok(1 << 19));
    }
}
