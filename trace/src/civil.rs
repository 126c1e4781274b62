//! UTC calendar dates for file names and headers, without a date crate
//! (the tracer module links this crate and must stay small).

/// `secs` since the Unix epoch as (year, month, day, hour, minute,
/// second), UTC, by Howard Hinnant's days-to-civil algorithm.
pub fn utc(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    let rem = rem as u32;
    (year, month, day, rem / 3600, rem / 60 % 60, rem % 60)
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_civil() {
        assert_eq!(super::utc(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(super::utc(1_795_533_360), (2026, 11, 24, 15, 16, 0));
        assert_eq!(super::utc(951_868_740), (2000, 2, 29, 23, 59, 0));
        assert_eq!(super::utc(-1), (1969, 12, 31, 23, 59, 59));
    }
}
