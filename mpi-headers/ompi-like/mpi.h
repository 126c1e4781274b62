/* Imitates Open MPI 4.1's mpi.h quirks for stubgen's tests. */
#ifndef FAKE_OMPI_MPI_H
#define FAKE_OMPI_MPI_H
#include <stddef.h>
#define OPEN_MPI 1
#if defined(__GNUC__)
#define OMPI_DECLSPEC __attribute__((visibility("default")))
#define __mpi_interface_deprecated__(msg) __attribute__((__deprecated__(msg)))
#else
#define OMPI_DECLSPEC
#define __mpi_interface_deprecated__(msg)
#endif
#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif
typedef struct ompi_communicator_t *MPI_Comm;
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_request_t *MPI_Request;
typedef struct ompi_status_public_t MPI_Status;
typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Count;
struct ompi_status_public_t {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int _cancelled;
    size_t _ucount;
};
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm, int, void *, void *, void *, int *);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm, int, void *, void *);
OMPI_DECLSPEC int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm);
OMPI_DECLSPEC int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
                            int tag, MPI_Comm comm);
OMPI_DECLSPEC int PMPI_Pcontrol(const int level, ...);
OMPI_DECLSPEC double PMPI_Wtime(void);
OMPI_DECLSPEC int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                               MPI_Status *array_of_statuses);
OMPI_DECLSPEC int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
OMPI_DECLSPEC int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                          MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                          int *comm_keyval, void *extra_state);
OMPI_DECLSPEC int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
OMPI_DECLSPEC int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
    __mpi_interface_deprecated__("PMPI_Attr_get is superseded by PMPI_Comm_get_attr in MPI-2.0");
OMPI_DECLSPEC MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
#if defined(c_plusplus) || defined(__cplusplus)
}
#endif
#endif
