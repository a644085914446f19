use super::*;

#[test]
fn every_knob_is_listed_once_with_its_help() {
    let mut names: Vec<&str> = all().map(|k| k.name).collect();
    assert_eq!(names.len(), KEYS.len());
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KEYS.len(), "a name declared twice");
    for (k, (name, help)) in all().zip(KEYS) {
        assert_eq!((k.name, k.help), (*name, *help));
        assert!(!k.help.is_empty() && !k.unit.is_empty(), "{}", k.name);
    }
}

#[test]
fn a_declared_default_is_the_configuration_s_default() {
    // Setting a knob to the default its declaration states changes nothing:
    // the table and `PacketConfig::default` say the same thing.
    let mut wrong = vec![];
    for k in all().filter(|k| !k.default.is_empty()) {
        let mut c = PacketConfig::default();
        match c.set(k.name, k.default) {
            Err(e) => wrong.push(format!("{}'s default '{}': {e}", k.name, k.default)),
            Ok(()) if c != PacketConfig::default() => wrong.push(format!(
                "{}'s default '{}' is not the default",
                k.name, k.default
            )),
            Ok(()) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_unknown_key_lists_the_valid_ones() {
    let e = PacketConfig::default().set("bufer", "1").unwrap_err();
    assert_eq!(e.key, "bufer");
    assert!(e
        .message
        .starts_with("unknown option; valid: transport, mtu,"));
}
