// Writes a tiny checkpoint (Linear(2, 1), SGD with momentum after one step) to the path given:
// the seed of fuzz/corpus/checkpoint/, as the odd-mode input (its first byte 1, then the payload).
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "blr/torch/checkpoint/checkpoint.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_seed CHECKPOINT SEED\n");
    return 2;
  }
  ::torch::manual_seed(1);
  ::torch::nn::Linear model(2, 1);
  ::torch::optim::SGD optimizer(model->parameters(), ::torch::optim::SGDOptions(0.1).momentum(0.9));
  optimizer.zero_grad();
  model->forward(::torch::ones({3, 2})).sum().backward();
  optimizer.step();
  blr::torch::save_checkpoint(argv[1], {{"epoch", 1}, {"optimizer", "sgd"}}, *model, optimizer);
  std::ifstream in(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream out(argv[2], std::ios::binary);
  out << '\x01' << bytes.substr(24);  // header (24 bytes) dropped: the harness rebuilds it
  return 0;
}
