! LU in Fortran (`include 'mpif.h'`, the grid split and neighbours in a
! COMMON block as NPB's LU keeps them): the same kernel as lu.c, same
! output. SSOR iterations for the 7-point Poisson problem with zero
! boundaries, columns over a 2-D Cartesian communicator; the lower sweep
! goes plane by plane, each rank waiting (blocking MPI_Recv) for its west
! and south neighbours' new edge of the plane and sending (MPI_Send) its
! east and north edges downstream; the upper sweep runs the other way.
!
! Rank counts: a power of two up to 4,096.
! prints (rank 0): lu: np N grid NX NY NZ dims PX PY
!                  lu: iter I rsdnm R
!                  lu: checksum S
!                  lu: verified yes|NO
program lu
  implicit none
  include 'mpif.h'
  integer, parameter :: nx = 64, ny = 64, nz = 16, iters = 8
  integer :: lx, ly, west, east, south, north, cart
  common /lugrid/ lx, ly, west, east, south, north, cart
  integer :: rank, np, ierr, dims(2), coords(2), i, j, k, it, x, y
  logical :: periods(2), falling
  double precision, allocatable :: u(:, :, :), f(:, :, :), sb(:), rb(:)
  double precision :: last, r2, g, rsdnm, r, s, total

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  dims = 0
  call MPI_Dims_create(np, 2, dims, ierr)
  call need_ranks(iand(np, np - 1) == 0 .and. mod(nx, dims(1)) == 0 .and. mod(ny, dims(2)) == 0, &
    'lu', np, 'the rank count must be a power of two up to 4096')
  periods = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Comm_rank(cart, rank, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call MPI_Cart_shift(cart, 0, 1, west, east, ierr)
  call MPI_Cart_shift(cart, 1, 1, south, north, ierr)
  lx = nx / dims(1)
  ly = ny / dims(2)
  allocate (u(0:nz + 1, 0:ly + 1, 0:lx + 1), f(0:nz + 1, 0:ly + 1, 0:lx + 1))
  allocate (sb(max(lx, ly) * nz), rb(max(lx, ly) * nz))
  u = 0
  f = 0
  do i = 1, lx
    do j = 1, ly
      do k = 1, nz
        x = coords(1) * lx + i
        y = coords(2) * ly + j
        f(k, j, i) = (mod(x * 7 + y * 13 + k * 29, 17) - 8) / 64d0
      end do
    end do
  end do
  if (rank == 0) then
    write (*, '(a,i0,a,3(1x,i0),a,2(1x,i0))') 'lu: np ', np, ' grid', nx, ny, nz, ' dims', dims
    flush (6)
  end if
  last = huge(last)
  falling = .true.
  do it = 1, iters
    call exchange(u, sb, rb)
    call sweep(u, f, .true., rb)
    call exchange(u, sb, rb)
    call sweep(u, f, .false., rb)
    call exchange(u, sb, rb)
    r2 = 0
    do i = 1, lx
      do j = 1, ly
        do k = 1, nz
          r = f(k, j, i) - 6 * u(k, j, i) + u(k, j, i - 1) + u(k, j, i + 1) + u(k, j - 1, i) &
            + u(k, j + 1, i) + u(k - 1, j, i) + u(k + 1, j, i)
          r2 = r2 + r * r
        end do
      end do
    end do
    call MPI_Allreduce(r2, g, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    rsdnm = sqrt(g / (dble(nx) * ny * nz))
    falling = falling .and. rsdnm < last
    last = rsdnm
    if (rank == 0) then
      write (*, '(a,i0,a,es23.15)') 'lu: iter ', it, ' rsdnm ', rsdnm
      flush (6)
    end if
  end do
  s = sum(u(1:nz, 1:ly, 1:lx))
  call MPI_Allreduce(s, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
  if (rank == 0) then
    write (*, '(a,es23.15)') 'lu: checksum ', total
    write (*, '(a,a)') 'lu: verified ', merge('yes', 'NO ', falling)
  end if
  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)
end program lu

! Copies column i = at (axis 0) or row j = at (axis 1), all k, to buf or back.
integer function edge(u, axis, at, buf, pack)
  implicit none
  integer :: lx, ly, west, east, south, north, cart
  common /lugrid/ lx, ly, west, east, south, north, cart
  double precision, intent(inout) :: u(0:16 + 1, 0:ly + 1, 0:lx + 1), buf(*)
  integer, intent(in) :: axis, at
  logical, intent(in) :: pack
  integer :: a, k
  edge = 0
  do a = 1, merge(lx, ly, axis == 1)
    do k = 1, 16
      edge = edge + 1
      if (axis == 1) then
        if (pack) then
          buf(edge) = u(k, at, a)
        else
          u(k, at, a) = buf(edge)
        end if
      else
        if (pack) then
          buf(edge) = u(k, a, at)
        else
          u(k, a, at) = buf(edge)
        end if
      end if
    end do
  end do
end function edge

! The four side faces' ghosts from the neighbours (0 at the boundary).
subroutine exchange(u, sb, rb)
  implicit none
  include 'mpif.h'
  integer :: lx, ly, west, east, south, north, cart
  common /lugrid/ lx, ly, west, east, south, north, cart
  double precision, intent(inout) :: u(*), sb(*), rb(*)
  integer, external :: edge
  integer :: nb(0:1, 0:1), n(0:1), axis, dir, to, from, c, ierr
  nb = reshape((/ west, south, east, north /), (/ 2, 2 /))
  n = (/ lx, ly /)
  do axis = 0, 1
    do dir = 0, 1
      to = nb(axis, dir)
      from = nb(axis, 1 - dir)
      c = edge(u, axis, merge(n(axis), 1, dir == 1), sb, .true.)
      call MPI_Sendrecv(sb, c, MPI_DOUBLE_PRECISION, to, 10 + axis * 2 + dir, rb, c, &
        MPI_DOUBLE_PRECISION, from, 10 + axis * 2 + dir, cart, MPI_STATUS_IGNORE, ierr)
      if (from /= MPI_PROC_NULL) c = edge(u, axis, merge(0, n(axis) + 1, dir == 1), rb, .false.)
    end do
  end do
end subroutine exchange

! One pipelined sweep: lower from the west/south corner, else upper.
subroutine sweep(u, f, lower, buf)
  implicit none
  include 'mpif.h'
  integer :: lx, ly, west, east, south, north, cart
  common /lugrid/ lx, ly, west, east, south, north, cart
  integer, parameter :: nz = 16
  double precision, parameter :: omega = 1.2d0
  double precision, intent(inout) :: u(0:nz + 1, 0:ly + 1, 0:lx + 1), buf(*)
  double precision, intent(in) :: f(0:nz + 1, 0:ly + 1, 0:lx + 1)
  logical, intent(in) :: lower
  integer :: from_x, from_y, to_x, to_y, gx, gy, ex, ey, kk, k, ii, jj, i, j, ierr
  double precision :: s
  from_x = merge(west, east, lower)
  from_y = merge(south, north, lower)
  to_x = merge(east, west, lower)
  to_y = merge(north, south, lower)
  gx = merge(0, lx + 1, lower)
  gy = merge(0, ly + 1, lower)
  ex = merge(lx, 1, lower)
  ey = merge(ly, 1, lower)
  do kk = 1, nz
    k = merge(kk, nz + 1 - kk, lower)
    if (from_x /= MPI_PROC_NULL) then
      call MPI_Recv(buf, ly, MPI_DOUBLE_PRECISION, from_x, k, cart, MPI_STATUS_IGNORE, ierr)
      u(k, 1:ly, gx) = buf(1:ly)
    end if
    if (from_y /= MPI_PROC_NULL) then
      call MPI_Recv(buf, lx, MPI_DOUBLE_PRECISION, from_y, nz + k, cart, MPI_STATUS_IGNORE, ierr)
      u(k, gy, 1:lx) = buf(1:lx)
    end if
    do ii = 1, lx
      do jj = 1, ly
        i = merge(ii, lx + 1 - ii, lower)
        j = merge(jj, ly + 1 - jj, lower)
        s = f(k, j, i) + u(k, j, i - 1) + u(k, j, i + 1) + u(k, j - 1, i) + u(k, j + 1, i) &
          + u(k - 1, j, i) + u(k + 1, j, i)
        u(k, j, i) = (1 - omega) * u(k, j, i) + omega * s / 6
      end do
    end do
    if (to_x /= MPI_PROC_NULL) then
      buf(1:ly) = u(k, 1:ly, ex)
      call MPI_Send(buf, ly, MPI_DOUBLE_PRECISION, to_x, k, cart, ierr)
    end if
    if (to_y /= MPI_PROC_NULL) then
      buf(1:lx) = u(k, ey, 1:lx)
      call MPI_Send(buf, lx, MPI_DOUBLE_PRECISION, to_y, nz + k, cart, ierr)
    end if
  end do
end subroutine sweep
