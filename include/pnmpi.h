/* pnmpi.h: the C API for pnmpi modules.
 *
 * Source-compatible with LLNL PnMPI's module API: the same names, types
 * and status codes, so PnMPI-native modules rebuild against it unchanged.
 * Differences, all in the module author's favour:
 *  - Names in descriptors may be up to PNMPI_SERVICE_NAMELEN - 1 bytes and
 *    signatures up to PNMPI_SERVICE_SIGLEN - 1 (LLNL: 29 and 19). A longer
 *    name passed to any service is refused with PNMPI_FAILURE, never
 *    silently truncated.
 *  - Every service checks its handles and pointers and returns a status.
 * Binary compatibility: the four calls that take a descriptor are bound
 * (an __asm__ label) to libpnmpi's PNMPI_Service_..._Wide symbols, which
 * take this header's larger descriptors. The plain symbols take LLNL's
 * 30/20-byte layout, so modules compiled against LLNL's headers (its own
 * status, requests, datatype, ...) run unchanged next to yours.
 *
 * A module calls the next layer of the chain through XMPI_X, declared in
 * <pnmpi/xmpi.h> (generated for the MPI pnmpi was built against).
 * XMPI_X_NewStack(stack, args...) enters another stack; declare the ones
 * you use, e.g. int XMPI_Send_NewStack(PNMPI_modHandle_t, const void *,
 * int, MPI_Datatype, int, int, MPI_Comm);
 */
#ifndef PNMPI_H
#define PNMPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PNMPI_SERVICE_NAMELEN 256
#define PNMPI_SERVICE_SIGLEN 64

/* A module's handle, or a stack's handle (from GetStackByName). */
typedef int PNMPI_modHandle_t;

typedef enum PNMPI_status_t {
    PNMPI_SUCCESS = 0,
    PNMPI_FAILURE = -1,
    PNMPI_NOMEM = -2,
    PNMPI_NOMODULE = -3,
    PNMPI_NOSERVICE = -4,
    PNMPI_NOGLOBAL = -5,
    PNMPI_SIGNATURE = -6,
    PNMPI_NOARG = -7,
    PNMPI_NOSTACK = -8,
    PNMPI_NOT_IMPLEMENTED = INT8_MIN
} PNMPI_status_t;

typedef int (*PNMPI_Service_Fct_t)();

typedef struct PNMPI_Service_descriptor_t {
    char name[PNMPI_SERVICE_NAMELEN];
    char sig[PNMPI_SERVICE_SIGLEN];
    PNMPI_Service_Fct_t fct;
} PNMPI_Service_descriptor_t;

typedef struct PNMPI_Global_descriptor_t {
    char name[PNMPI_SERVICE_NAMELEN];
    char sig; /* 'c' char, 's' short, 'i' int, 'u' unsigned, 'l' long,
                 'd' double, 'f' float, 'p' pointer */
    union {
        char *c;
        short *s;
        int *i;
        unsigned *u;
        long *l;
        double *d;
        float *f;
        void **p;
    } addr;
} PNMPI_Global_descriptor_t;

/* Module hooks a module may define (all optional):
 *   const char *PNMPI_ModuleName;        its name in messages and lookups
 *   void PNMPI_RegistrationPoint(void);  after all modules are loaded
 *   void PNMPI_Init(void);               after every RegistrationPoint
 *   void PNMPI_Fini(void);               at exit
 *   void PNMPI_UnregistrationPoint(void);at exit, after every Fini
 * MPI is not running during these hooks. */

/* A module's MPI_Wtime and MPI_Wtick wrappers are called only if it says
 * so, once, at file scope: PNMPI_WRAPS_CLOCK; (LLNL's libpnmpi defines no
 * MPI_Wtime or MPI_Wtick, so modules generated to wrap every routine never
 * see the application's clock reads; without this line, neither here). */
#ifdef __cplusplus
#define PNMPI_WRAPS_CLOCK extern "C" __attribute__((visibility("default"))) const int PNMPI_WrapsClock = 1
#else
#define PNMPI_WRAPS_CLOCK __attribute__((visibility("default"))) const int PNMPI_WrapsClock = 1
#endif

/* Modules and stacks. */
PNMPI_status_t PNMPI_Service_RegisterModule(const char *name);
PNMPI_status_t PNMPI_Service_GetModuleByName(const char *name, PNMPI_modHandle_t *handle);
PNMPI_status_t PNMPI_Service_GetModuleSelf(PNMPI_modHandle_t *handle);
PNMPI_status_t PNMPI_Service_GetStackByName(const char *name, PNMPI_modHandle_t *stack);
PNMPI_status_t PNMPI_Service_ChangeStack(PNMPI_modHandle_t stack);

/* Services: functions offered by name and signature. */
PNMPI_status_t PNMPI_Service_RegisterService(const PNMPI_Service_descriptor_t *service)
    __asm__("PNMPI_Service_RegisterService_Wide");
PNMPI_status_t PNMPI_Service_GetServiceByName(PNMPI_modHandle_t handle, const char *name, const char *sig,
                                              PNMPI_Service_descriptor_t *service)
    __asm__("PNMPI_Service_GetServiceByName_Wide");

/* Globals: variables offered by name and one-character type. */
PNMPI_status_t PNMPI_Service_RegisterGlobal(const PNMPI_Global_descriptor_t *global)
    __asm__("PNMPI_Service_RegisterGlobal_Wide");
PNMPI_status_t PNMPI_Service_GetGlobalByName(PNMPI_modHandle_t handle, const char *name, char sig,
                                             PNMPI_Global_descriptor_t *global)
    __asm__("PNMPI_Service_GetGlobalByName_Wide");

/* Arguments from the configuration (`argument KEY VALUE`). */
PNMPI_status_t PNMPI_Service_GetArgument(PNMPI_modHandle_t handle, const char *key, const char **value);
const char *PNMPI_Service_GetArgumentSelf(const char *key);

/* Whether MPI_Pcontrol reaches a module. */
PNMPI_status_t PNMPI_Service_GetPcontrol(PNMPI_modHandle_t handle, int *flag);
int PNMPI_Service_GetPcontrolSelf(void);

/* Hooks: call a named hook in the next module below that defines it. */
void PNMPI_Service_CallHook(const char *hook);
void PNMPI_Service_CallHook_NewStack(const char *hook, PNMPI_modHandle_t stack);

const char *PNMPI_Service_strerror(PNMPI_status_t err);

#ifdef __cplusplus
}
#endif

#endif
