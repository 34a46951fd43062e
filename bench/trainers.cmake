# Benchmarks: trainers. train_throughput times the real training loop;
# bench/peer_torch_throughput.py measures PyTorch on the same models.
add_executable(train_throughput ${CMAKE_CURRENT_LIST_DIR}/train_throughput.cc)
target_link_libraries(train_throughput PRIVATE xwires_trainers)
