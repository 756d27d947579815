// Empty translation unit that owns lakerun's shared precompiled torch header (cmake/torch_pch.h).
