! The racy master-worker program of c-tests/programs/masterworker.c in
! Fortran (`use mpi`), for the replay module's tests: rank 0 hands out
! tasks and folds the results into an order-sensitive checksum as they
! arrive, through MPI_Recv(MPI_ANY_SOURCE), MPI_Waitany and MPI_Testsome.
!
! usage: masterworker_f [TASKS [WORK_US]]   (default 300 tasks, 20 us)
! prints (rank 0): masterworker_f: tasks N checksum C
program masterworker_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, tasks, work_us, next_task
  integer(8) :: checksum
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  tasks = 300
  work_us = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) tasks
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_us
  end if
  if (nprocs < 2 .or. tasks < 3 * (nprocs - 1)) then
    if (rank == 0) write (0, *) 'masterworker_f: needs 2 ranks or more, and 3 tasks a worker or more'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  if (rank == 0) then
    call master()
  else
    call worker()
  end if
  call MPI_Finalize(ierr)

contains

  subroutine spin(us)
    double precision, intent(in) :: us
    double precision :: t0
    t0 = MPI_Wtime()
    do while ((MPI_Wtime() - t0) * 1d6 < us)
    end do
  end subroutine spin

  subroutine worker()
    integer :: task, st(MPI_STATUS_SIZE)
    integer(8) :: result
    do
      call MPI_Recv(task, 1, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      if (st(MPI_TAG) == tasks + 1) exit
      call spin(dble(work_us * (1 + mod(task, 3))))
      result = int(task, 8) * 7919 + 13
      call MPI_Send(result, 1, MPI_INTEGER8, 0, task, MPI_COMM_WORLD, ierr)
    end do
  end subroutine worker

  subroutine master()
    integer :: workers, done, w, i, k, n, outstanding
    integer :: st(MPI_STATUS_SIZE)
    integer(8) :: result
    integer(8), allocatable :: results(:)
    integer, allocatable :: reqs(:), idx(:)

    workers = nprocs - 1
    done = 0
    next_task = 0
    checksum = 1
    do w = 1, workers
      call feed(w)
    end do
    ! 1: blocking wildcard receives.
    do while (done < tasks / 3)
      call MPI_Recv(result, 1, MPI_INTEGER8, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      call combine(result, st(MPI_SOURCE))
      done = done + 1
      call feed(st(MPI_SOURCE))
    end do
    allocate (results(workers), reqs(workers), idx(workers))
    do w = 1, workers
      call MPI_Irecv(results(w), 1, MPI_INTEGER8, w, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(w), ierr)
    end do
    outstanding = workers
    ! 2: MPI_Waitany.
    do while (done < 2 * tasks / 3)
      call MPI_Waitany(workers, reqs, i, MPI_STATUS_IGNORE, ierr)
      call combine(results(i), i)
      done = done + 1
      if (next_task < tasks) then
        call MPI_Irecv(results(i), 1, MPI_INTEGER8, i, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(i), ierr)
      else
        outstanding = outstanding - 1
      end if
      call feed(i)
    end do
    ! 3: MPI_Testsome, polled.
    do while (outstanding > 0)
      call MPI_Testsome(workers, reqs, n, idx, MPI_STATUSES_IGNORE, ierr)
      if (n == MPI_UNDEFINED) exit
      do k = 1, n
        i = idx(k)
        call combine(results(i), i)
        done = done + 1
        if (next_task < tasks) then
          call MPI_Irecv(results(i), 1, MPI_INTEGER8, i, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(i), ierr)
        else
          outstanding = outstanding - 1
        end if
        call feed(i)
      end do
    end do
    write (*, '(a,i0,a,i0)') 'masterworker_f: tasks ', done, ' checksum ', checksum
  end subroutine master

  subroutine combine(r, from)
    integer(8), intent(in) :: r
    integer, intent(in) :: from
    checksum = mod(checksum * 1000003_8 + r + from, 2147483647_8)
  end subroutine combine

  subroutine feed(to)
    integer, intent(in) :: to
    integer :: task
    if (next_task < tasks) then
      task = next_task
      next_task = next_task + 1
    else
      task = tasks + 1
    end if
    call MPI_Send(task, 1, MPI_INTEGER, to, task, MPI_COMM_WORLD, ierr)
  end subroutine feed
end program masterworker_f
