// SPDX-License-Identifier: MIT
#include "views/plan_view.h"

#include "views/measured_overlay.h"

namespace swapscope {

void PlanView::setOverlay(std::shared_ptr<const MeasuredOverlay>) {}

void PlanView::selectLayer(int) {}

}  // namespace swapscope
