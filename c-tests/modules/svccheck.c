/* Exercises every PNMPI_Service_* call, its success and its error paths,
 * in the configuration of tests/services.rs:
 *   0 svccheck (this; argument color "blue green", argument provider_path)
 *   1 provider.c by path, 2 seqA by path, then `stack side` with 3 seqB.
 * Each check prints, on launcher rank 0,
 *   check NAME: got X want Y        (with " FAIL" appended on a mismatch)
 * and every rank prints "svccheck rank R: N checks, F failed" once its
 * MPI_Barrier wrapper has run the checks that need a wrapper. */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *PNMPI_ModuleName = "svccheck-mod";

static const char *rank;
static int checks, failed;
static char name255[256], name256[257];

static void check(const char *name, long got, long want)
{
    checks++;
    failed += got != want;
    if (rank && strcmp(rank, "0") == 0)
        printf("check %s: got %ld want %ld%s\n", name, got, want, got == want ? "" : " FAIL");
}

static void check_str(const char *name, const char *got, const char *want)
{
    int same = got && want ? strcmp(got, want) == 0 : got == want;
    checks++;
    failed += !same;
    if (rank && strcmp(rank, "0") == 0)
        printf("check %s: got %s want %s%s\n", name, got ? got : "(null)", want ? want : "(null)",
               same ? "" : " FAIL");
}

static int nothing(void) { return 0; }

/* A module handle by name, or the status when the lookup fails. */
static long by_name(const char *name)
{
    PNMPI_modHandle_t h = -100;
    PNMPI_status_t rc = PNMPI_Service_GetModuleByName(name, &h);
    return rc == PNMPI_SUCCESS ? h : rc;
}

static long stack(const char *name)
{
    PNMPI_modHandle_t h = -100;
    PNMPI_status_t rc = PNMPI_Service_GetStackByName(name, &h);
    return rc == PNMPI_SUCCESS ? h : rc;
}

void PNMPI_RegistrationPoint(void)
{
    PNMPI_Service_descriptor_t s;
    memset(name255, 'n', 255);
    memset(name256, 'n', 256);
    rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    check("register_module", PNMPI_Service_RegisterModule("svccheck-registered"), PNMPI_SUCCESS);
    check("register_module_256", PNMPI_Service_RegisterModule(name256), PNMPI_FAILURE);
    /* The longest name a descriptor holds: 255 bytes and the NUL. */
    strcpy(s.name, name255);
    strcpy(s.sig, "v");
    s.fct = (PNMPI_Service_Fct_t)nothing;
    check("register_service_255", PNMPI_Service_RegisterService(&s), PNMPI_SUCCESS);
    /* A name that fills the field with no NUL is refused. */
    memset(s.name, 'n', sizeof s.name);
    check("register_service_unterminated", PNMPI_Service_RegisterService(&s), PNMPI_FAILURE);
}

void PNMPI_Init(void)
{
    PNMPI_modHandle_t self = -100;
    PNMPI_Service_descriptor_t s;
    PNMPI_Global_descriptor_t g;
    const char *value = NULL, *provider_path = PNMPI_Service_GetArgumentSelf("provider_path");
    int flag = -100, n = -100;

    /* Modules and stacks. */
    check("self_status", PNMPI_Service_GetModuleSelf(&self), PNMPI_SUCCESS);
    check("self", self, 0);
    check("self_null", PNMPI_Service_GetModuleSelf(NULL), PNMPI_FAILURE);
    check("by_registered_name", by_name("svccheck-registered"), 0);
    check("by_module_name", by_name("svccheck-mod"), 0);
    check("by_config_name", by_name("svccheck"), 0);
    check("provider_by_registered_name", by_name("sendcounter"), 1);
    check("provider_by_module_name", by_name("counter-provider"), 1);
    check("provider_by_config_path", provider_path ? by_name(provider_path) : -100, 1);
    check("seqA_by_file_stem", by_name("seqA"), 2);
    /* The provider is configured by path and exports PNMPI_ModuleName: its
     * file stem alone must still find it. Printed apart ("probe"), so that
     * tests/services.rs checks it in a test of its own. */
    if (rank && strcmp(rank, "0") == 0)
        printf("probe provider_by_file_stem: got %ld want 1\n", by_name("provider"));
    check("seqB_by_config_name", by_name("seqB"), 3);
    check("no_module", by_name("nosuchmodule"), PNMPI_NOMODULE);
    check("by_name_256", by_name(name256), PNMPI_FAILURE);
    check("by_name_null", PNMPI_Service_GetModuleByName(NULL, &self), PNMPI_FAILURE);
    check("stack_default", stack("default"), 0);
    check("stack_side", stack("side"), 5);
    check("no_stack", stack("nosuchstack"), PNMPI_NOSTACK);
    check("stack_256", stack(name256), PNMPI_FAILURE);
    check("change_stack_to_a_module", PNMPI_Service_ChangeStack(1), PNMPI_NOSTACK);
    check("change_stack_negative", PNMPI_Service_ChangeStack(-1), PNMPI_NOSTACK);

    /* Services. */
    memset(&s, 0, sizeof s);
    check("service", PNMPI_Service_GetServiceByName(1, "count_sends", "p", &s), PNMPI_SUCCESS);
    check_str("service_name", s.name, "count_sends");
    check_str("service_sig", s.sig, "p");
    check("service_call", s.fct ? ((int (*)(int *))s.fct)(&n) : -100, PNMPI_SUCCESS);
    check("service_result", n, 0);
    check("service_signature", PNMPI_Service_GetServiceByName(1, "count_sends", "i", &s), PNMPI_SIGNATURE);
    check("no_service", PNMPI_Service_GetServiceByName(1, "nosuchservice", "p", &s), PNMPI_NOSERVICE);
    check("service_of_other_module", PNMPI_Service_GetServiceByName(2, "count_sends", "p", &s),
          PNMPI_NOSERVICE);
    check("service_bad_handle", PNMPI_Service_GetServiceByName(99, "count_sends", "p", &s), PNMPI_NOMODULE);
    check("service_negative_handle", PNMPI_Service_GetServiceByName(-1, "count_sends", "p", &s),
          PNMPI_NOMODULE);
    check("service_255", PNMPI_Service_GetServiceByName(0, name255, "v", &s), PNMPI_SUCCESS);
    check("service_256", PNMPI_Service_GetServiceByName(0, name256, "v", &s), PNMPI_FAILURE);
    check("service_null_out", PNMPI_Service_GetServiceByName(1, "count_sends", "p", NULL), PNMPI_FAILURE);

    /* Globals. */
    memset(&g, 0, sizeof g);
    check("global", PNMPI_Service_GetGlobalByName(1, "sends", 'i', &g), PNMPI_SUCCESS);
    check_str("global_name", g.name, "sends");
    check("global_sig", g.sig, 'i');
    check("global_value", g.addr.i ? *g.addr.i : -100, 0);
    check("global_signature", PNMPI_Service_GetGlobalByName(1, "sends", 'l', &g), PNMPI_SIGNATURE);
    check("no_global", PNMPI_Service_GetGlobalByName(1, "nosuchglobal", 'i', &g), PNMPI_NOGLOBAL);
    check("global_of_other_module", PNMPI_Service_GetGlobalByName(2, "sends", 'i', &g), PNMPI_NOGLOBAL);
    check("global_bad_handle", PNMPI_Service_GetGlobalByName(99, "sends", 'i', &g), PNMPI_NOMODULE);
    check("global_256", PNMPI_Service_GetGlobalByName(1, name256, 'i', &g), PNMPI_FAILURE);

    /* Arguments. */
    check("argument", PNMPI_Service_GetArgument(0, "color", &value), PNMPI_SUCCESS);
    check_str("argument_value", value, "blue green");
    check("no_argument", PNMPI_Service_GetArgument(0, "nosuchkey", &value), PNMPI_NOARG);
    check("argument_of_other_module", PNMPI_Service_GetArgument(2, "color", &value), PNMPI_NOARG);
    check("argument_bad_handle", PNMPI_Service_GetArgument(99, "color", &value), PNMPI_NOMODULE);
    check("argument_256", PNMPI_Service_GetArgument(0, name256, &value), PNMPI_FAILURE);
    check_str("argument_self", PNMPI_Service_GetArgumentSelf("color"), "blue green");
    check_str("argument_self_missing", PNMPI_Service_GetArgumentSelf("nosuchkey"), NULL);
    check_str("argument_self_256", PNMPI_Service_GetArgumentSelf(name256), NULL);

    /* Pcontrol: by default only the first module of each stack gets it. */
    check("pcontrol_status", PNMPI_Service_GetPcontrol(0, &flag), PNMPI_SUCCESS);
    check("pcontrol_first_module", flag, 1);
    PNMPI_Service_GetPcontrol(1, &flag);
    check("pcontrol_second_module", flag, 0);
    PNMPI_Service_GetPcontrol(3, &flag);
    check("pcontrol_first_of_side_stack", flag, 1);
    check("pcontrol_bad_handle", PNMPI_Service_GetPcontrol(99, &flag), PNMPI_NOMODULE);
    check("pcontrol_self", PNMPI_Service_GetPcontrolSelf(), 1);

    /* Hooks: provider_hook runs in the provider, which records itself. */
    PNMPI_Service_CallHook("provider_hook");
    PNMPI_Service_CallHook("no_module_defines_this_hook");
    check("hook_calls", PNMPI_Service_GetGlobalByName(1, "hook_calls", 'i', &g) ? -100 : *g.addr.i, 1);
    check("hook_self", PNMPI_Service_GetGlobalByName(1, "hook_self", 'i', &g) ? -100 : *g.addr.i, 1);

    /* strerror: a text for every status. */
    {
        static const PNMPI_status_t all[] = {PNMPI_SUCCESS,  PNMPI_FAILURE,  PNMPI_NOMEM,
                                             PNMPI_NOMODULE, PNMPI_NOSERVICE, PNMPI_NOGLOBAL,
                                             PNMPI_SIGNATURE, PNMPI_NOARG,   PNMPI_NOSTACK,
                                             PNMPI_NOT_IMPLEMENTED};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            const char *text = PNMPI_Service_strerror(all[i]);
            char what[64];
            snprintf(what, sizeof what, "strerror_%d", (int)all[i]);
            check(what, text && *text && strcmp(text, "unknown status") != 0, 1);
            if (rank && strcmp(rank, "0") == 0)
                printf("strerror %d: %s\n", (int)all[i], text ? text : "(null)");
        }
    }
    fflush(stdout);
}

/* "Self" inside a wrapper is the wrapper's module; the provider's global
 * is live (one MPI_Send went through it before the first barrier). */
int MPI_Barrier(MPI_Comm comm)
{
    static int done;
    if (!done++) {
        PNMPI_modHandle_t self = -100;
        PNMPI_Global_descriptor_t g;
        PNMPI_Service_GetModuleSelf(&self);
        check("self_in_wrapper", self, 0);
        check_str("argument_self_in_wrapper", PNMPI_Service_GetArgumentSelf("color"), "blue green");
        check("pcontrol_self_in_wrapper", PNMPI_Service_GetPcontrolSelf(), 1);
        check("sends_at_first_barrier",
              PNMPI_Service_GetGlobalByName(1, "sends", 'i', &g) ? -100 : *g.addr.i, 1);
        printf("svccheck rank %s: %d checks, %d failed\n", rank ? rank : "?", checks, failed);
        fflush(stdout);
    }
    return XMPI_Barrier(comm);
}
