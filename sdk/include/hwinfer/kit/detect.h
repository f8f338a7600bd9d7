// detect.h — how the plugin kit finds, at compile time, which optional members a backend struct
// has (an enqueue per kernel kind, the optional hooks): one void_t trait per member.
//   HWINFER_KIT_DETECT(Trait, expression)       Trait<B> is true when |expression| (naming B)
//                                               compiles.
//   HWINFER_KIT_DETECT_KIND(Trait, expression)  Trait<B, Desc> likewise, for a per-kind member.
#ifndef HWINFER_SDK_KIT_DETECT_H_
#define HWINFER_SDK_KIT_DETECT_H_

#include <type_traits>
#include <utility>

#define HWINFER_KIT_DETECT(Trait, expression) \
  template <typename B, typename = void>      \
  struct Trait : std::false_type {};          \
  template <typename B>                       \
  struct Trait<B, std::void_t<decltype(expression)>> : std::true_type {};

#define HWINFER_KIT_DETECT_KIND(Trait, expression)      \
  template <typename B, typename Desc, typename = void> \
  struct Trait : std::false_type {};                    \
  template <typename B, typename Desc>                  \
  struct Trait<B, Desc, std::void_t<decltype(expression)>> : std::true_type {};

#endif  // HWINFER_SDK_KIT_DETECT_H_
