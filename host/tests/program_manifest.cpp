// Reading of the sw/ program manifest.
#include "program_manifest.hpp"

#include <fstream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera::test {

void PrintTo(const Program& p, std::ostream* os) {
  *os << p.kind << ':' << p.name << ':' << p.tiles;
}

std::vector<Program> readManifest(const std::string& binDir) {
  std::vector<Program> programs;
  const std::string path = binDir + "/programs.txt";
  std::ifstream in(path);
  if (!in) throw Error("cannot read the program manifest " + path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Program p;
    if (!(fields >> p.kind >> p.name)) continue;
    if (!(fields >> p.tiles)) p.tiles = 1;
    programs.push_back(p);
  }
  return programs;
}

std::vector<std::string> splitDevices(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string d;
  while (std::getline(ss, d, ',')) {
    if (!d.empty()) out.push_back(d);
  }
  return out;
}

}  // namespace tessera::test
