//! The module services of pnmpi.h under real mpirun: two modules
//! cooperating through a service and globals, every service's success and
//! error answers, and a module written only against LLNL PnMPI's API.

use crate::common;
use common::*;

const NP: usize = 3;

fn counts() -> std::path::PathBuf {
    program("counts", Link::Pnmpi)
}

/// The token counts.c passes round: three rounds, each rank but 0 adds one.
fn counts_line(np: usize) -> String {
    format!("counts: size {np} token {}", 3 * (np - 1))
}

fn sorted(lines: Vec<&str>) -> Vec<String> {
    let mut v: Vec<String> = lines.into_iter().map(str::to_string).collect();
    v.sort();
    v
}

/// What the consumer prints when `before` sends already went through the
/// provider at its k-th send (k = 1..=3 on every rank: counts.c sends 3).
fn consumer_lines(before: i32) -> Vec<String> {
    let mut v: Vec<String> = (0..NP)
        .flat_map(|r| {
            (1..=3).map(move |k| {
                format!(
                    "consumer rank {r} send {k}: service {0} global {0}",
                    k - 1 + before
                )
            })
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_module_calls_another_modules_service_and_reads_its_globals() {
    api_module("provider", "provider", &[]);
    api_module("consumer", "consumer", &[]);
    let provider_lines: Vec<String> = (0..NP)
        .map(|r| format!("provider rank {r}: sends 3 pokes 3"))
        .collect();

    // Provider above: at each send the consumer sees it counted already.
    let mut case = Case::new();
    case.conf("module provider\nmodule consumer\n");
    let run = case.mpirun(NP, &counts(), &[]);
    run.assert_ok();
    assert_eq!(run.lines("counts:"), [counts_line(NP)]);
    assert_eq!(
        run.lines("consumer init:"),
        vec!["consumer init: module 0 (0) service 0 global 0 0"; NP]
    );
    assert_eq!(sorted(run.lines("consumer rank")), consumer_lines(1));
    // The consumer wrote through the provider's global "pokes".
    assert_eq!(sorted(run.lines("provider rank")), provider_lines);

    // Provider below: the consumer runs first, the count lags by one. The
    // values are live: the service and the global read the provider's
    // state at the time of the call.
    let mut case = Case::new();
    case.conf("module consumer\nmodule provider\n");
    let run = case.mpirun(NP, &counts(), &[]);
    run.assert_ok();
    assert_eq!(run.lines("counts:"), [counts_line(NP)]);
    assert_eq!(
        run.lines("consumer init:"),
        vec!["consumer init: module 1 (0) service 0 global 0 0"; NP]
    );
    assert_eq!(sorted(run.lines("consumer rank")), consumer_lines(0));
    assert_eq!(sorted(run.lines("provider rank")), provider_lines);
}

/// Runs svccheck (module 0) with provider (1, by path), seqA (2, by path)
/// and, in stack `side`, seqB (3), on 2 ranks.
fn svccheck_run() -> Run {
    api_module("svccheck", "svccheck", &[]);
    let provider = api_module("provider", "provider", &[]);
    let a = seq("A", &[]);
    seq("B", &[]);
    let mut case = Case::new();
    case.conf(&format!(
        "module svccheck\nargument color blue green\nargument provider_path {p}\n\
         module {p}\nmodule {a}\nstack side\nmodule seqB\n",
        p = provider.display(),
        a = a.display()
    ));
    let run = case.mpirun(2, &counts(), &[]);
    run.assert_ok();
    assert_eq!(run.lines("counts:"), [counts_line(2)]);
    run
}

#[test]
fn every_service_answers_its_success_and_error_cases() {
    let run = svccheck_run();
    let checks = run.lines("check ");
    let failed: Vec<&&str> = checks.iter().filter(|l| l.ends_with(" FAIL")).collect();
    assert!(failed.is_empty(), "failed checks:\n{failed:#?}\n{}", run.stderr);
    // Each check is there, with the value it must have (got == want).
    let expected = [
        ("register_module", "0"),
        ("register_module_256", "-1"),
        ("register_service_255", "0"),
        ("register_service_unterminated", "-1"),
        ("self_status", "0"),
        ("self", "0"),
        ("self_null", "-1"),
        ("by_registered_name", "0"),
        ("by_module_name", "0"),
        ("by_config_name", "0"),
        ("provider_by_registered_name", "1"),
        ("provider_by_module_name", "1"),
        ("provider_by_config_path", "1"),
        ("seqA_by_file_stem", "2"),
        ("seqB_by_config_name", "3"),
        ("no_module", "-3"),
        ("by_name_256", "-1"),
        ("by_name_null", "-1"),
        ("stack_default", "0"),
        ("stack_side", "5"),
        ("no_stack", "-8"),
        ("stack_256", "-1"),
        ("change_stack_to_a_module", "-8"),
        ("change_stack_negative", "-8"),
        ("service", "0"),
        ("service_name", "count_sends"),
        ("service_sig", "p"),
        ("service_call", "0"),
        ("service_result", "0"),
        ("service_signature", "-6"),
        ("no_service", "-4"),
        ("service_of_other_module", "-4"),
        ("service_bad_handle", "-3"),
        ("service_negative_handle", "-3"),
        ("service_255", "0"),
        ("service_256", "-1"),
        ("service_null_out", "-1"),
        ("global", "0"),
        ("global_name", "sends"),
        ("global_sig", "105"),
        ("global_value", "0"),
        ("global_signature", "-6"),
        ("no_global", "-5"),
        ("global_of_other_module", "-5"),
        ("global_bad_handle", "-3"),
        ("global_256", "-1"),
        ("argument", "0"),
        ("argument_value", "blue green"),
        ("no_argument", "-7"),
        ("argument_of_other_module", "-7"),
        ("argument_bad_handle", "-3"),
        ("argument_256", "-1"),
        ("argument_self", "blue green"),
        ("argument_self_missing", "(null)"),
        ("argument_self_256", "(null)"),
        ("pcontrol_status", "0"),
        ("pcontrol_first_module", "1"),
        ("pcontrol_second_module", "0"),
        ("pcontrol_first_of_side_stack", "1"),
        ("pcontrol_bad_handle", "-3"),
        ("pcontrol_self", "1"),
        ("hook_calls", "1"),
        ("hook_self", "1"),
        ("self_in_wrapper", "0"),
        ("argument_self_in_wrapper", "blue green"),
        ("pcontrol_self_in_wrapper", "1"),
        ("sends_at_first_barrier", "1"),
    ];
    for (name, want) in expected {
        let line = format!("check {name}: got {want} want {want}");
        assert!(
            checks.contains(&line.as_str()),
            "missing `{line}`\n{}",
            run.stdout
        );
    }
    // strerror: a known, non-empty text for each status, all different.
    let codes = [0, -1, -2, -3, -4, -5, -6, -7, -8, -128];
    for code in codes {
        let line = format!("check strerror_{code}: got 1 want 1");
        assert!(
            checks.contains(&line.as_str()),
            "missing `{line}`\n{}",
            run.stdout
        );
    }
    let texts: std::collections::BTreeSet<&str> = run
        .lines("strerror ")
        .iter()
        .filter_map(|l| l.split_once(": ").map(|(_, t)| t))
        .collect();
    assert_eq!(texts.len(), codes.len(), "{}", run.stdout);
    assert!(
        run.stdout.contains("strerror -4: no such service"),
        "{}",
        run.stdout
    );
    assert_eq!(checks.len(), expected.len() + codes.len());
    // Every rank ran every check.
    for r in 0..2 {
        let want = format!("svccheck rank {r}: {} checks, 0 failed", checks.len());
        assert_eq!(run.lines(&format!("svccheck rank {r}:")), [want.as_str()]);
    }
}

#[test]
fn a_module_is_found_by_its_file_stem_even_when_it_exports_a_module_name() {
    // provider.so, configured by path, exports PNMPI_ModuleName
    // "counter-provider" and registers "sendcounter"; its file stem
    // "provider" must find it too.
    let run = svccheck_run();
    assert_eq!(
        run.lines("probe provider_by_file_stem:"),
        ["probe provider_by_file_stem: got 1 want 1"]
    );
}

#[test]
fn a_module_written_against_the_llnl_api_builds_and_runs() {
    // Built with -Wall -Wextra -Werror against include/pnmpi.h as shipped.
    api_module("llnl_api", "llnl_api", &[]);
    let classic = "module llnl_api\nargument greeting hello from the conf\n";
    // The same argument given in the TOML form.
    let toml = "[[module]]\nname = \"llnl_api\"\narguments = { greeting = \"hello from the conf\" }\n";
    for (file, text) in [(".pnmpi-conf", classic), ("pnmpi.toml", toml)] {
        let case = Case::new();
        case.write(file, text);
        let run = case.mpirun(2, &counts(), &[]);
        run.assert_ok();
        assert_eq!(run.lines("counts:"), [counts_line(2)]);
        assert_eq!(
            sorted(run.lines("llnl rank")),
            (0..2)
                .map(|r| format!(
                    "llnl rank {r}: sends 3 service 3 global 3 greeting hello from the conf init success"
                ))
                .collect::<Vec<_>>(),
            "{file}"
        );
    }
}

/// LLNL's print API (`pnmpi/debug_io.h`), which LLNL's own compiled
/// modules import: a warning with the rank once MPI runs, a debug message
/// only when `PNMPI_DBGLEVEL` has its level's bit (and only on
/// `PNMPI_DBGNODE`'s rank when set), with integer, string and floating
/// arguments; an error stops the run with a non-zero exit.
#[test]
fn llnl_print_api_prints_warnings_debug_by_level_and_errors_stop_the_run() {
    api_module("llnl_print", "llnl_print", &[]);
    api_module("llnl_print", "llnl_print_error", &["ERROR"]);
    let lines = |run: &Run, what: &str| -> Vec<String> {
        let mut l: Vec<String> = run
            .stderr
            .lines()
            .filter(|l| l.contains(what))
            .map(String::from)
            .collect();
        l.sort();
        l
    };
    let mut case = Case::new();
    case.write(".pnmpi-conf", "module llnl_print\n");
    let run = case.mpirun(2, &counts(), &[]);
    run.assert_ok();
    assert_eq!(
        lines(&run, "[llnl_print]"),
        [
            "0: [llnl_print] warning 7 seven 2.50",
            "1: [llnl_print] warning 7 seven 2.50"
        ],
        "{}",
        run.stderr
    );
    // PNMPI_DEBUG_MODULE is bit 2; rank 1 only.
    case.env("PNMPI_DBGLEVEL", "2").env("PNMPI_DBGNODE", "1");
    let run = case.mpirun(2, &counts(), &[]);
    run.assert_ok();
    assert_eq!(
        lines(&run, "debug"),
        ["1: [llnl_print] debug 3 0.5"],
        "{}",
        run.stderr
    );
    case.env("PNMPI_DBGLEVEL", "4");
    assert!(lines(&case.mpirun(2, &counts(), &[]), "debug").is_empty());
    // An error: the message, where, and the run stops.
    let case = Case::new();
    case.write(".pnmpi-conf", "module llnl_print_error\n");
    let run = case.mpirun(2, &counts(), &[]);
    assert!(!run.success(), "{}", run.stderr);
    assert!(
        run.stderr.contains("[llnl_print] MPI_Finalize:") && run.stderr.contains(": error 9"),
        "{}",
        run.stderr
    );
}
