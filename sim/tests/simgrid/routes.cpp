// Prints SimGrid's route between every pair of hosts of a platform, for
// sim/tests/simgrid_routes.rs to compare with pnmpi's graphs.
//
//   routes PLATFORM.xml PREFIX COUNT
//
// Hosts are PREFIX0 .. PREFIX(COUNT-1). One line per ordered pair:
// "SRC DST LATENCY_S LINK LINK ...", the links in the order the route
// crosses them, the latency as SimGrid sums it (seconds, %.17g).
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PLATFORM PREFIX COUNT\n", argv[0]);
    return 2;
  }
  engine.load_platform(argv[1]);
  const std::string prefix = argv[2];
  const int count = std::stoi(argv[3]);
  std::vector<simgrid::s4u::Host*> hosts;
  for (int i = 0; i < count; i++)
    hosts.push_back(simgrid::s4u::Host::by_name(prefix + std::to_string(i)));
  for (int i = 0; i < count; i++)
    for (int j = 0; j < count; j++) {
      if (i == j)
        continue;
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      hosts[i]->route_to(hosts[j], links, &latency);
      std::printf("%d %d %.17g", i, j, latency);
      for (const auto* link : links)
        std::printf(" %s", link->get_cname());
      std::printf("\n");
    }
  return 0;
}
