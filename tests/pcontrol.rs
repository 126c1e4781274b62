//! MPI_Pcontrol delivery: which modules receive it under `globalpcontrol`
//! int (the default), on and off, and with `pcontrol on|off` per module;
//! PNMPI_Service_GetPcontrolSelf agrees. counts.c calls MPI_Pcontrol(2),
//! (3) and (1); each count module prints what it saw at PNMPI_Fini.

use crate::common;
use crate::counting;
use common::*;
use counting::*;

const NP: usize = 2;

fn names() {
    for n in ["A", "B", "C"] {
        count_module(n);
    }
}

#[test]
fn by_default_only_the_first_module_of_each_stack_receives_it() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nmodule countB\nstack side\nmodule countC\n");
    let run = run_counts(&case, NP);
    assert_eq!(seen(&run, "A"), everywhere("A", NP, ALL, &LEVELS, true));
    assert_eq!(seen(&run, "B"), everywhere("B", NP, ALL, &[], false));
    // First of its stack, so it would receive it; but the application's
    // calls never enter a named stack.
    assert_eq!(seen(&run, "C"), everywhere("C", NP, NONE, &[], true));
}

#[test]
fn pcontrol_on_and_off_choose_per_module() {
    names();
    let mut case = Case::new();
    case.conf("module countA\npcontrol off\nmodule countB\npcontrol on\nmodule countC\n");
    let run = run_counts(&case, NP);
    assert_eq!(seen(&run, "A"), everywhere("A", NP, ALL, &[], false));
    assert_eq!(seen(&run, "B"), everywhere("B", NP, ALL, &LEVELS, true));
    assert_eq!(seen(&run, "C"), everywhere("C", NP, ALL, &[], false));
}

#[test]
fn globalpcontrol_on_delivers_to_every_module() {
    names();
    let mut case = Case::new();
    case.conf("globalpcontrol on\nmodule countA\nmodule countB\nmodule countC\n");
    let run = run_counts(&case, NP);
    for n in ["A", "B", "C"] {
        assert_eq!(seen(&run, n), everywhere(n, NP, ALL, &LEVELS, true));
    }
}

#[test]
fn globalpcontrol_off_delivers_to_no_module_even_with_pcontrol_on() {
    names();
    let mut case = Case::new();
    case.conf("globalpcontrol off\nmodule countA\nmodule countB\npcontrol on\n");
    let run = run_counts(&case, NP);
    assert_eq!(seen(&run, "A"), everywhere("A", NP, ALL, &[], false));
    assert_eq!(seen(&run, "B"), everywhere("B", NP, ALL, &[], false));
}

#[test]
fn globalpcontrol_int_is_the_default_spelled_out() {
    names();
    let mut case = Case::new();
    case.conf("globalpcontrol int\nmodule countA\nmodule countB\n");
    let run = run_counts(&case, NP);
    assert_eq!(seen(&run, "A"), everywhere("A", NP, ALL, &LEVELS, true));
    assert_eq!(seen(&run, "B"), everywhere("B", NP, ALL, &[], false));
}

#[test]
fn toml_pcontrol_keys_match_the_classic_ones() {
    names();
    let mut case = Case::new();
    let file = case.write(
        "tools.toml",
        "globalpcontrol = \"int\"\n\n[[module]]\nname = \"countA\"\npcontrol = false\n\n\
         [[module]]\nname = \"countB\"\npcontrol = true\n",
    );
    case.env("PNMPI_CONF", &file.to_string_lossy());
    let run = run_counts(&case, NP);
    assert_eq!(seen(&run, "A"), everywhere("A", NP, ALL, &[], false));
    assert_eq!(seen(&run, "B"), everywhere("B", NP, ALL, &LEVELS, true));
}
