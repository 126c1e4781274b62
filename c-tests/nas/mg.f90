! MG in Fortran (`include 'mpif.h'`, the communicator and neighbours in a
! COMMON block as NPB's MG keeps them): the same kernel as mg.c, same
! output. V-cycles for the periodic Poisson problem on an N^3 grid split
! in blocks over a periodic 3-D Cartesian communicator; faces exchanged
! with MPI_Sendrecv to the MPI_Cart_shift neighbours, one axis after the
! other.
!
! Rank counts: a power of two up to N^3/8.
! usage: mg [N]   (a power of two, default 64)
! prints (rank 0): mg: np N grid G dims PX PY PZ levels L
!                  mg: cycle C rnm2 R2 rnmu RU
!                  mg: verified yes|NO
module mg_levels
  implicit none
  integer, parameter :: cycles = 3, maxlev = 16
  type level
    integer :: n(3)
    double precision, allocatable :: u(:, :, :), f(:, :, :), r(:, :, :)
  end type level
  type(level), target :: lev(maxlev)
  double precision, allocatable :: sendbuf(:), recvbuf(:)
contains
  ! Copies the plane `at` of axis `axis` of a (with ghosts) to buf or back.
  integer function face(a, n, axis, at, buf, pack)
    integer, intent(in) :: n(3), axis, at
    double precision, intent(inout) :: a(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1), buf(*)
    logical, intent(in) :: pack
    integer :: lo(3), hi(3), i, j, k
    lo = 0
    hi = n + 1
    lo(axis) = at
    hi(axis) = at
    face = 0
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          face = face + 1
          if (pack) then
            buf(face) = a(i, j, k)
          else
            a(i, j, k) = buf(face)
          end if
        end do
      end do
    end do
  end function face

  ! Fills the ghost layer of a from the neighbours (NPB's comm3).
  subroutine exchange(a, n)
    include 'mpif.h'
    integer, intent(in) :: n(3)
    double precision, intent(inout) :: a(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1)
    integer :: cart, up(3), down(3)
    common /mgcomm/ cart, up, down
    integer :: axis, count, c, ierr
    do axis = 1, 3
      count = face(a, n, axis, n(axis), sendbuf, .true.)
      call MPI_Sendrecv(sendbuf, count, MPI_DOUBLE_PRECISION, up(axis), axis, recvbuf, count, &
        MPI_DOUBLE_PRECISION, down(axis), axis, cart, MPI_STATUS_IGNORE, ierr)
      c = face(a, n, axis, 0, recvbuf, .false.)
      c = face(a, n, axis, 1, sendbuf, .true.)
      call MPI_Sendrecv(sendbuf, count, MPI_DOUBLE_PRECISION, down(axis), 3 + axis, recvbuf, &
        count, MPI_DOUBLE_PRECISION, up(axis), 3 + axis, cart, MPI_STATUS_IGNORE, ierr)
      c = face(a, n, axis, n(axis) + 1, recvbuf, .false.)
    end do
  end subroutine exchange

  ! r = f - A u over the interior.
  subroutine residual(l)
    type(level), intent(inout) :: l
    integer :: i, j, k
    call exchange(l%u, l%n)
    do k = 1, l%n(3)
      do j = 1, l%n(2)
        do i = 1, l%n(1)
          l%r(i, j, k) = l%f(i, j, k) - (6 * l%u(i, j, k) - l%u(i - 1, j, k) - l%u(i + 1, j, k) &
            - l%u(i, j - 1, k) - l%u(i, j + 1, k) - l%u(i, j, k - 1) - l%u(i, j, k + 1))
        end do
      end do
    end do
  end subroutine residual

  ! Weighted Jacobi: u += (2/3) r / 6.
  subroutine smooth(l, sweeps)
    type(level), intent(inout) :: l
    integer, intent(in) :: sweeps
    integer :: s, n(3)
    n = l%n
    do s = 1, sweeps
      call residual(l)
      l%u(1:n(1), 1:n(2), 1:n(3)) = l%u(1:n(1), 1:n(2), 1:n(3)) + l%r(1:n(1), 1:n(2), 1:n(3)) / 9d0
    end do
  end subroutine smooth

  recursive subroutine vcycle(il, levels)
    integer, intent(in) :: il, levels
    integer :: i, j, k, c, n(3), m(3)
    double precision :: s
    if (il == levels) then
      call smooth(lev(il), 2)
      return
    end if
    call smooth(lev(il), 1)
    call residual(lev(il))
    n = lev(il)%n
    m = lev(il + 1)%n
    do k = 1, m(3)
      do j = 1, m(2)
        do i = 1, m(1)
          s = 0
          do c = 0, 7
            s = s + lev(il)%r(2 * i - 1 + ishft(c, -2), 2 * j - 1 + iand(ishft(c, -1), 1), &
              2 * k - 1 + iand(c, 1))
          end do
          lev(il + 1)%f(i, j, k) = s / 4
        end do
      end do
    end do
    lev(il + 1)%u = 0
    call vcycle(il + 1, levels)
    do k = 1, n(3)
      do j = 1, n(2)
        do i = 1, n(1)
          lev(il)%u(i, j, k) = lev(il)%u(i, j, k) + lev(il + 1)%u((i + 1) / 2, (j + 1) / 2, (k + 1) / 2)
        end do
      end do
    end do
    call smooth(lev(il), 1)
  end subroutine vcycle

  ! The L2 norm over the global grid and the largest magnitude of r.
  subroutine norms(l, g, rnm2, rnmu)
    include 'mpif.h'
    type(level), intent(in) :: l
    integer, intent(in) :: g
    double precision, intent(out) :: rnm2, rnmu
    integer :: cart, up(3), down(3)
    common /mgcomm/ cart, up, down
    double precision :: s(2), t(2)
    integer :: n(3), ierr
    n = l%n
    s(1) = sum(l%r(1:n(1), 1:n(2), 1:n(3))**2)
    s(2) = maxval(abs(l%r(1:n(1), 1:n(2), 1:n(3))))
    call MPI_Allreduce(s(1), t(1), 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    call MPI_Allreduce(s(2), t(2), 1, MPI_DOUBLE_PRECISION, MPI_MAX, cart, ierr)
    rnm2 = sqrt(t(1) / (dble(g) * g * g))
    rnmu = t(2)
  end subroutine norms
end module mg_levels

program mg
  use mg_levels
  implicit none
  include 'mpif.h'
  integer :: cart, up(3), down(3)
  common /mgcomm/ cart, up, down
  double precision, parameter :: a = 1220703125d0
  double precision, external :: randlc
  integer, external :: int_arg
  integer :: rank, np, ierr, g, dims(3), coords(3), levels, n(3), ax, c, p(3), lo
  logical :: periods(3), mine, falling
  double precision :: seed, rnm2, rnmu, first, last

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  g = int_arg(64)
  dims = 0
  call MPI_Dims_create(np, 3, dims, ierr)
  call need_ranks(g >= 4 .and. iand(g, g - 1) == 0 .and. iand(np, np - 1) == 0 .and. &
    all(mod(g, dims) == 0) .and. all(g / dims >= 2), 'mg', np, &
    'the rank count must be a power of two up to N^3/8, N a power of two')
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, .false., cart, ierr)
  call MPI_Comm_rank(cart, rank, ierr)
  call MPI_Cart_coords(cart, rank, 3, coords, ierr)
  do ax = 1, 3
    call MPI_Cart_shift(cart, ax - 1, 1, down(ax), up(ax), ierr)
  end do

  n = g / dims
  allocate (sendbuf((n(1) + 2) * (n(2) + 2) + (n(2) + 2) * (n(3) + 2) + (n(1) + 2) * (n(3) + 2)))
  allocate (recvbuf(size(sendbuf)))
  levels = 0
  do
    levels = levels + 1
    lev(levels)%n = n
    allocate (lev(levels)%u(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
    allocate (lev(levels)%f(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
    allocate (lev(levels)%r(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
    lev(levels)%u = 0
    lev(levels)%f = 0
    lev(levels)%r = 0
    if (any(mod(n, 2) /= 0) .or. any(n < 4) .or. levels == maxlev) exit
    n = n / 2
  end do

  seed = 314159265d0
  do c = 0, 19
    mine = .true.
    do ax = 1, 3
      p(ax) = int(randlc(seed, a) * g)
      lo = coords(ax) * lev(1)%n(ax)
      mine = mine .and. p(ax) >= lo .and. p(ax) < lo + lev(1)%n(ax)
      p(ax) = p(ax) - lo + 1
    end do
    if (mine) lev(1)%f(p(1), p(2), p(3)) = lev(1)%f(p(1), p(2), p(3)) + merge(1, -1, c < 10)
  end do
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a,3(1x,i0),a,i0)') 'mg: np ', np, ' grid ', g, ' dims', dims, ' levels ', levels
    flush (6)
  end if
  call residual(lev(1))
  call norms(lev(1), g, first, rnmu)
  last = first
  falling = .true.
  do c = 1, cycles
    call vcycle(1, levels)
    call residual(lev(1))
    call norms(lev(1), g, rnm2, rnmu)
    falling = falling .and. rnm2 < last
    last = rnm2
    if (rank == 0) then
      write (*, '(a,i0,a,es23.15,a,es23.15)') 'mg: cycle ', c, ' rnm2 ', rnm2, ' rnmu ', rnmu
      flush (6)
    end if
  end do
  if (rank == 0) then
    if (falling .and. rnm2 < first / 10) then
      write (*, '(a)') 'mg: verified yes'
    else
      write (*, '(a)') 'mg: verified NO'
    end if
  end if
  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)
end program mg
